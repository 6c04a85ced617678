"""Run reports: per-mode summaries (slowest worker per step, goodput), `exact`, JSON and plots."""

from __future__ import annotations

import json
from pathlib import Path

from p4fabric.hostproc import reference, tensor
from p4fabric.report import RunReport, WorkerResult, plot, summarise, write_json


def _result(host: str, seconds: list[float], exact: bool = True, error: str = "") -> WorkerResult:
    return WorkerResult(host, int(host[1:]) - 1, "in-network", seconds, exact,
                        stats={"retransmissions": 2, "checksum_failures": 1}, error=error)


def test_summary_takes_the_slowest_worker_per_step() -> None:
    results = [_result("h1", [0.5, 0.25]), _result("h2", [0.25, 1.0])]
    summary = summarise("in-network", results, size=1 << 20, count=2)
    assert summary.step_seconds == [0.5, 1.0] and summary.median_seconds == 0.75
    assert round(summary.goodput_gbps, 4) == round((1 << 20) * 32 / 0.75 / 1e9, 4)
    assert summary.exact and summary.retransmissions == 4 and summary.checksum_failures == 2


def test_not_exact_when_a_worker_fails_is_wrong_or_short() -> None:
    assert not summarise("m", [_result("h1", [0.1]), _result("h2", [], error="boom")], 10, 1).exact
    wrong = _result("h1", [0.1], exact=False)
    wrong.max_abs_error = 31.0
    summary = summarise("m", [wrong, _result("h2", [0.1])], 10, 1)
    assert not summary.exact and summary.max_abs_error == 31.0
    assert not summarise("m", [_result("h1", [0.1])], 10, count=2).exact
    assert not summarise("m", [], 10, 1).exact


def test_report_json_and_plots(tmp_path: Path) -> None:
    report = RunReport(topology="leafspine-2x2x2", target="embedded", size=4096, count=2, workers=["h1", "h2"])
    report.modes = [summarise("in-network", [_result("h1", [0.1, 0.2]), _result("h2", [0.1, 0.1])], 4096, 2),
                    summarise("ring", [_result("h1", [0.3, 0.3]), _result("h2", [0.3, 0.3])], 4096, 2)]
    report.link_bytes = {"h1-leaf1": {"in-network": 1000, "ring": 3000}, "leaf1-spine1": {"in-network": 10}}
    write_json(report, tmp_path)
    written = plot(report, tmp_path)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["exact"] is True and data["tensor_bytes"] == 4096 * 4
    assert {p.name for p in written} == {"steps.png", "links.png"}
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)
    report.errors.append("controller failed")
    assert report.exact is False


def test_worker_tensors_are_exact_integers_and_reproducible() -> None:
    a = tensor(7, 1, 0, 1000)
    assert a.dtype.name == "float32" and (a == tensor(7, 1, 0, 1000)).all()
    assert not (a == tensor(7, 2, 0, 1000)).all()
    assert (a == a.round()).all() and abs(a).max() <= 1000
    total = reference(7, 3, 0, 1000)
    assert (total == tensor(7, 0, 0, 1000) + tensor(7, 1, 0, 1000) + tensor(7, 2, 0, 1000)).all()
