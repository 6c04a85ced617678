"""`bench.plots`: every registered figure from small synthetic results, skipping (never raising) on missing data."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.cli import run_benchmarks
from bench.plots import FIGURES, plot_all

PNG = b"\x89PNG\r\n\x1a\n"


def _mode(seconds: float, links: dict[str, int]) -> dict[str, Any]:
    return {"median_seconds": seconds, "goodput_gbps": 0.002, "retransmissions": 0, "exact": True,
            "bytes_per_link": links}


RESULTS: dict[str, dict[str, Any]] = {
    "switch_pps": {
        "aggregate_file": {"pps": 44000.0, "cpu_pps": 46000.0},
        "l3_forward_file": {"pps": 38000.0, "cpu_pps": 41000.0},
        "l3_forward_live_veth": {"pps": 9000.0},
        "bmv2_aggregate_pps_reference": 15800,
    },
    "hostagent_allreduce": {
        "agent_pps": {"fill_int32_pps": 900000, "parse_pps": 90000},
        "allreduce": [{"bytes": 256, "in_network_s": 0.002, "ring_s": 0.003},
                      {"bytes": 4096, "in_network_s": 0.02, "ring_s": 0.003, "gloo_s": 0.004}],
        "adaptive": {"threshold_bytes": 1024}, "workers": 4,
    },
    "hostagent_train": {
        "in_network": {"parallel_accuracy": 0.95, "parallel_seconds": 6.0, "single_accuracy": 0.95,
                       "single_seconds": 0.1, "workers": 4, "epochs": 4},
        "ring": {"parallel_accuracy": 0.95, "parallel_seconds": 0.5},
    },
    "fabric": {
        "topology": "leafspine,2,2,2", "workers": 4,
        "in_network_vs_ring": [{"size": 16384, "in_network": _mode(0.25, {"h1-leaf1": 166796, "leaf1-spine1": 1}),
                                "ring": _mode(0.09, {"h1-leaf1": 216624, "leaf1-spine2": 208220})}],
        "loss_sweep": [{"loss_percent": 0.0, "goodput_gbps": 0.002, "retransmissions": 0, "exact": True},
                       {"loss_percent": 2.0, "goodput_gbps": 0.0001, "retransmissions": 204, "exact": False}],
        "sweep": [{"mode": m, "workers": w, "bytes": b, "median_seconds": 0.001 * w * b / 65536,
                   "goodput_gbps": 0.01, "bytes_per_host_link": 2 * b, "correct": not (m == "ring" and w == 8)}
                  for m in ("in-network int8", "ring") for w in (4, 8) for b in (65536, 1 << 20)],
        "calibration": {"tolerance": 0.25, "points": [
            {"algorithm": "innet", "workers": 2, "bytes": 16384.0, "measured_s": 0.05, "predicted_s": 0.045,
             "rel_error": -0.1, "fitted_on": True},
            {"algorithm": "ring", "workers": 4, "bytes": 16384.0, "measured_s": 0.03, "predicted_s": 0.015,
             "rel_error": -0.5, "fitted_on": False}]},
        "recovery": {"fault": "kill spine1 at 2 s", "step_seconds": [1.3, 1.4, 1.2], "recovery_ms": [80.2]},
    },
    "quantization": {
        "rows": [{"format": f, "distribution": d, "workers": w, "rel_rms_error": e * w, "max_error_over_bound": 0.5,
                  "data_bytes_per_element": b}
                 for f, e, b in (("int32", 0.0, 5.03), ("int8", 0.01, 2.03)) for d in ("gaussian", "integer")
                 for w in (2, 4)],
        "float32_reference": [{"format": "float32", "distribution": "gaussian", "workers": w, "rel_rms_error": 1e-8}
                              for w in (2, 4)],
    },
}

EXPECTED = {"switch_pps.png", "hostagent_allreduce.png", "hostagent_allreduce-rates.png", "hostagent_train.png",
            "fabric-innet_vs_ring.png", "fabric-loss.png", "fabric-sweep.png",
            "fabric-calibration.png", "fabric-recovery.png", "quantization.png"}


def test_every_figure_is_a_png(tmp_path: Path) -> None:
    written = plot_all(tmp_path, RESULTS)
    assert {p.name for p in written} == EXPECTED
    assert {p.name for p in tmp_path.iterdir()} == EXPECTED
    for path in written:
        assert path.read_bytes()[:8] == PNG


def test_missing_sections_are_skipped(tmp_path: Path) -> None:
    sparse: dict[str, dict[str, Any]] = {
        "switch_pps": {"summary": {"pps": 1.0}}, "hostagent_allreduce": {"allreduce": []},
        "quantization": {"rows": "not a list"}, "unknown_bench": {"x": 1}, "fabric": {"summary": {}}}
    assert plot_all(tmp_path, sparse) == []
    assert list(tmp_path.iterdir()) == []


def test_a_quick_fabric_run_gets_the_figures_its_data_allows(tmp_path: Path) -> None:
    quick = {k: RESULTS["fabric"][k] for k in ("topology", "workers", "loss_sweep", "calibration")}
    assert {p.name for p in plot_all(tmp_path, {"fabric": quick})} == {"fabric-loss.png",
                                                                          "fabric-calibration.png"}


def test_a_failing_figure_is_reported_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    def broken(data: dict[str, Any]) -> None:
        raise ValueError("bad row")

    monkeypatch.setitem(FIGURES, "switch_pps", [("broken", broken), *FIGURES["switch_pps"]])
    malformed = {"in_network_vs_ring": [{"size": 16384, "in_network": "oops"}], "loss_sweep": [{"loss_percent": 1}]}
    written = plot_all(tmp_path, {"switch_pps": RESULTS["switch_pps"], "fabric": malformed})
    assert [p.name for p in written] == ["switch_pps.png"]  # the malformed rows are left out, not drawn
    err = capsys.readouterr().err
    assert err.strip() == "p4ina bench: figure switch_pps-broken.png skipped: ValueError: bad row"
    assert not (tmp_path / "switch_pps-broken.png").exists()


@pytest.fixture
def pps_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    package = tmp_path / "pkgs" / "plotbench"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "switch_pps.py").write_text(f"def run(quick):\n    return {RESULTS['switch_pps']!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    yield "plotbench.switch_pps"
    for name in [m for m in sys.modules if m.startswith("plotbench")]:
        del sys.modules[name]


def test_summary_lists_the_plots(pps_package: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = run_benchmarks([pps_package], out_dir=out, quick=True)
    (entry,) = summary["benchmarks"]
    assert entry["status"] == "ok"
    assert entry["plots"] == [str(out / "switch_pps.png")]
    assert (out / "switch_pps.png").read_bytes()[:8] == PNG
    assert (out / "switch_pps.json").exists()
