"""The fabric benchmark's calibration fits on 2-worker runs only and judges every other point honestly."""

from __future__ import annotations

from dataclasses import replace

import pytest
from p4fabric.benchmarks import CALIBRATION_WORKERS, calibration_report, emulation_params

from bench.scale.model import Measurement, predict


def _points(truth_scale: dict[int, float]) -> list[Measurement]:
    truth = replace(emulation_params(), link_gbps=0.02, host_overhead_s=3e-4, switch_latency_s=4e-5, switch_agg_pps=5000.0)
    points = []
    for workers in CALIBRATION_WORKERS:
        for alg in ("innet", "ring"):
            for size in (16384.0, 131072.0):
                shape = Measurement(alg, "leafspine", workers, size, 1.0, hosts_per_leaf=workers // 2)
                points.append(replace(shape, seconds=predict(shape, truth) * truth_scale.get(workers, 1.0)))
    return points


def test_a_fabric_that_follows_the_model_is_predicted_within_tolerance() -> None:
    report = calibration_report(_points({}), emulation_params())
    assert report["held_out_points"] == 8
    assert report["held_out_within_tolerance"] == 8
    assert sum(p["fitted_on"] for p in report["points"]) == 4
    assert report["fitted"]["switch_agg_pps"] == pytest.approx(5000.0, rel=0.1)


def test_held_out_points_that_disagree_are_reported_as_misses() -> None:
    report = calibration_report(_points({8: 1.5}), emulation_params())
    misses = [p for p in report["points"] if not p["within_tolerance"]]
    assert {p["workers"] for p in misses} == {8}
    assert len(misses) == 4
    assert report["held_out_max_abs_rel_error"] > 0.25
