"""The fabric benchmark's calibration: the software-fabric model is fitted to every measured point, judged per
point, and cross-checked on worker counts it did not see; the sweep's bookkeeping is right."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from p4fabric.report import ModeSummary, RunReport

from bench.fabric_runs.calibration import FREE, calibration_report, emulation_params, measurement
from bench.fabric_runs.sweep import link_bytes, mode_row, ratios, ring_host_link_factor, topo_for
from bench.scale.model import predict

TRUTH = replace(emulation_params(cores=2), switch_op_cpu_s=70e-6, host_op_cpu_s=180e-6, wake_s=2e-4)


def _points(slowdown: dict[int, float]) -> list:
    points = []
    for workers in (2, 4, 8):
        for mode in ("in-network", "ring"):
            for elements in (4096, 32768):
                shape = measurement(mode, workers, elements, 1.0)
                points.append(replace(shape, seconds=predict(shape, TRUTH) * slowdown.get(workers, 1.0)))
    return points


def test_a_fabric_that_follows_the_model_is_reproduced_and_its_parameters_recovered() -> None:
    report = calibration_report(_points({}), emulation_params(cores=2))
    assert report["judged_workers"] == [4, 8]
    assert report["within_tolerance"] == report["judged_points"] == 8
    assert report["mean_abs_rel_error"] < 0.02
    assert report["fitted"]["switch_op_cpu_s"] == pytest.approx(70e-6, rel=0.1)
    assert report["fitted"]["host_op_cpu_s"] == pytest.approx(180e-6, rel=0.1)
    assert set(report["fitted"]) == set(FREE)
    assert report["cross_validation"]["within_tolerance"] == report["cross_validation"]["judged_points"] == 12
    assert report["from_smallest"]["fitted_on_workers"] == 2


def test_a_worker_count_that_disagrees_shows_up_as_misses() -> None:
    report = calibration_report(_points({8: 1.8}), emulation_params(cores=2))
    cross = report["cross_validation"]["points"]
    misses = {p["workers"] for p in cross if not p["within_tolerance"]}
    assert 8 in misses
    assert report["from_smallest"]["max_abs_rel_error"] > 0.25


def test_more_workers_cost_more_on_a_software_fabric() -> None:
    t = [predict(measurement("in-network", n, 32768, 1.0), TRUTH) for n in (2, 4, 8)]
    assert t[0] < t[1] < t[2]
    hardware = replace(TRUTH, cores=None)
    assert predict(measurement("in-network", 8, 32768, 1.0), hardware) < t[0] / 10


def test_sweep_bookkeeping() -> None:
    assert topo_for(8) == "leafspine,2,1,4"
    with pytest.raises(ValueError, match="even worker count"):
        topo_for(3)
    assert ring_host_link_factor(4) == pytest.approx(3.0)
    report = RunReport(topology="t", target="embedded", size=1024, count=2, workers=["h1", "h2"])
    report.link_bytes = {"h1-leaf1": {"ring": 100, "in-network": 40, "in-network int8": 20},
                         "h2-leaf2": {"ring": 300, "in-network": 60, "in-network int8": 30},
                         "leaf1-spine1": {"ring": 1000, "in-network": 10}}
    assert link_bytes(report, "ring") == {"bytes_per_host_link": 200.0, "bytes_per_switch_link": 1000.0}
    rows = []
    for mode, seconds in (("in-network", 2.0), ("ring", 1.0), ("in-network int8", 1.5)):
        summary = ModeSummary(mode, 1, [seconds], seconds, 0.1, True, 0, 0, 0, correct=True)
        rows.append(mode_row(report, summary, 2))
    assert all(r["correct"] for r in rows)
    # per all-reduce: 2 steps and the warm-up of the same size
    assert rows[0]["bytes_per_host_link"] == pytest.approx(50.0 / 3)
    assert rows[0]["host_link_bytes_per_tensor_byte"] == pytest.approx(50.0 / 3 / 4096)
    assert ratios(rows, 2, 1024) == pytest.approx({"ring_over_in_network_time": 0.5, "int8_over_int32_time": 0.75,
                                                   "int8_over_int32_host_link_bytes": 0.5})


def test_the_fabric_summary_is_not_correct_when_a_run_failed() -> None:
    from bench.fabric import _summary

    def data(sweep: list[dict[str, Any]], headline_errors: list[str]) -> dict[str, Any]:
        return {"sweep": sweep, "headline": {"rows": [{"mode": "ring", "correct": True}], "ratios": {},
                                             "errors": headline_errors},
                "calibration": {"within_tolerance": 8, "judged_points": 8}, "recovery": {"recovery_ms": [80.0]},
                "rates": {"rows": [], "errors": [], "speedups": {}, "innet_int32_highest_rate_at_80pct": None},
                "demo": {"rows": [], "errors": [], "ring_over_in_network_time": None}, "loss_sweep": []}

    measured: dict[str, Any] = {"mode": "ring", "correct": True}
    skipped: dict[str, Any] = {"mode": "gloo", "skipped": "predicted 90 s per step > budget 60 s"}
    assert _summary(data([measured, skipped], []), 1.0)["all_correct"] is True
    assert _summary(data([measured, {"mode": "gloo", "error": "gloo: 1 worker(s) failed"}], []), 1.0)[
        "all_correct"] is False
    assert _summary(data([measured], ["in-network: 1 worker(s) failed"]), 1.0)["all_correct"] is False
    assert _summary(data([{"mode": "in-network", "correct": False}], []), 1.0)["all_correct"] is False
    failed_fault_run = {**data([measured], []), "recovery": {"error": "FabricStartError: switch leaf1 exited"}}
    assert _summary(failed_fault_run, 1.0)["all_correct"] is False
