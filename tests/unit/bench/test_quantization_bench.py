"""`bench.quantization`: a quick run through p4ina.p4 on the embedded switch, and what its numbers must satisfy."""

from __future__ import annotations

from typing import Any

import pytest

from bench import quantization


def test_the_benchmark_can_run_here() -> None:
    assert quantization.unavailable() is None  # a missing program or compiler fails, never skips


@pytest.fixture(scope="module")
def quick() -> dict[str, Any]:
    return quantization.run(quick=True)


def _row(data: dict[str, Any], fmt: str, dist: str, workers: int) -> dict[str, Any]:
    return next(r for r in data["rows"]
                if r["format"] == fmt and r["distribution"] == dist and r["workers"] == workers)


def test_every_point_is_measured(quick: dict[str, Any]) -> None:
    combos = {(r["format"], r["distribution"], r["workers"]) for r in quick["rows"]}
    assert combos == {(f, d, n) for f in ("int32", "int16", "int8") for d in quantization.DISTRIBUTIONS
                      for n in quick["worker_counts"]}
    assert min(quick["worker_counts"]) == 2 and max(quick["worker_counts"]) == 16
    assert len(quick["float32_reference"]) == len(quantization.DISTRIBUTIONS) * len(quick["worker_counts"])


def test_errors_are_within_the_bounds_reported(quick: dict[str, Any]) -> None:
    for r in quick["rows"]:
        assert r["within_bound"], r
        assert r["max_abs_error"] <= r["max_bound"], r
        assert r["max_error_over_bound"] <= 1.0, r
        assert r["rms_error"] <= r["max_abs_error"], r
        assert r["ranks_agree"], r
        assert r["overflow_redos"] == 0, r
    assert quick["summary"]["within_bound"] == f"{len(quick['rows'])}/{len(quick['rows'])}"


def test_formats_trade_precision_for_bytes(quick: dict[str, Any]) -> None:
    n = max(quick["worker_counts"])
    gaussian = {f: _row(quick, f, "gaussian", n) for f in ("int32", "int16", "int8")}
    assert gaussian["int32"]["rel_rms_error"] < gaussian["int16"]["rel_rms_error"] < gaussian["int8"]["rel_rms_error"]
    assert (gaussian["int8"]["data_bytes_per_element"] < gaussian["int16"]["data_bytes_per_element"]
            < gaussian["int32"]["data_bytes_per_element"])
    # integer-valued floats fit int32's grid: that all-reduce is exact
    for workers in quick["worker_counts"]:
        assert _row(quick, "int32", "integer", workers)["max_abs_error"] == 0.0


def test_int32_is_as_close_as_float32_arithmetic(quick: dict[str, Any]) -> None:
    n = max(quick["worker_counts"])
    float32 = next(r for r in quick["float32_reference"] if r["distribution"] == "gaussian" and r["workers"] == n)
    assert _row(quick, "int32", "gaussian", n)["rel_rms_error"] < 10 * float32["rel_rms_error"]
