"""The run's verdict with quantized formats: int32, ring and gloo must be bit-exact, int16/int8 within their bound;
`report.json` keeps `exact` as "every mode correct" and adds `correct` and `bit_exact`; the table shows both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from p4fabric.report import RunReport, WorkerResult, print_summary, speedups, summarise, write_json


def _worker(host: str, fmt: str, *, exact: bool, within: bool, error: float = 0.0,
            seconds: float = 0.1) -> WorkerResult:
    return WorkerResult(host, int(host[1:]) - 1, f"in-network {fmt}", [seconds], exact, error,
                        within_bound=within, fmt=fmt, error_bound=96.0 if fmt in ("int16", "int8") else 0.0)


def _report(*modes: tuple[str, str, bool, bool, float]) -> RunReport:
    report = RunReport(topology="leafspine-2x1x2", target="embedded", size=8192, count=1, workers=["h1", "h2"])
    for name, fmt, exact, within, seconds in modes:
        results = [_worker(h, fmt, exact=exact, within=within, error=0.0 if exact else 31.0, seconds=seconds)
                   for h in ("h1", "h2")]
        report.modes.append(summarise(name, results, 8192, 1, fmt=fmt))
    return report


def test_quantized_mode_is_correct_within_its_bound_but_not_exact() -> None:
    summary = summarise("in-network int8", [_worker("h1", "int8", exact=False, within=True, error=31.0),
                                            _worker("h2", "int8", exact=True, within=True)], 8192, 1, fmt="int8")
    assert summary.correct and not summary.exact
    assert summary.fmt == "int8" and summary.max_abs_error == 31.0 and summary.error_bound == 96.0
    outside = summarise("in-network int8", [_worker("h1", "int8", exact=False, within=False, error=500.0)],
                        8192, 1, fmt="int8")
    assert not outside.correct


def test_int32_must_be_exact_whatever_the_bound_says() -> None:
    summary = summarise("in-network", [_worker("h1", "int32", exact=False, within=True, error=1.0)], 8192, 1,
                        fmt="int32")
    assert not summary.correct and not summary.exact


def test_run_verdict_and_json_keys(tmp_path: Path) -> None:
    report = _report(("ring", "", True, True, 0.2), ("in-network", "int32", True, True, 0.1),
                     ("in-network int8", "int8", False, True, 0.05))
    assert report.correct and report.exact and not report.bit_exact
    write_json(report, tmp_path)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["exact"] is True and data["correct"] is True and data["bit_exact"] is False
    assert [m["fmt"] for m in data["modes"]] == ["", "int32", "int8"]
    bad = _report(("in-network int8", "int8", False, False, 0.05))
    assert not bad.correct and not bad.exact


def test_summary_table_shows_exact_and_correct(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # rich wraps cells on a narrow console
    report = _report(("ring", "", True, True, 0.2), ("gloo", "", True, True, 0.4),
                     ("in-network int8", "int8", False, True, 0.1))
    print_summary(report)
    out = capsys.readouterr().out
    assert "exact" in out and "correct" in out and "within bound" in out and "31 (bound 96)" in out
    assert "in-network int8" in out
    assert "quantized formats within their error bound" in out
    assert speedups(report) == ["in-network int8 vs ring: 2.00x (faster)", "in-network int8 vs gloo: 4.00x (faster)"]
