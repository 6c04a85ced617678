"""The loss sweep's bookkeeping: each rate's goodput is judged against the lossless run of its own round, the
median of those ratios is reported, and one bad round makes the rate's row incorrect."""

from __future__ import annotations

from typing import Any

from bench.fabric import paired_loss_rows


def _run(loss: float, goodput: float, *, correct: bool = True) -> dict[str, Any]:
    return {"loss_percent": loss, "goodput_gbps": goodput, "median_seconds": 1 / goodput, "correct": correct,
            "exact": correct}


def test_each_round_is_compared_with_its_own_lossless_run() -> None:
    # lossless 0.10 / 0.05 / 0.08 in rounds 1-3; 1% at 0.08 / 0.045 / 0.04: ratios 0.8, 0.9, 0.5 (median 0.8),
    # where one lossless reference (round 1's) would give 0.8 / 0.45 / 0.4
    rows = paired_loss_rows({0.0: [_run(0, 0.10), _run(0, 0.05), _run(0, 0.08)],
                             1.0: [_run(1, 0.08), _run(1, 0.045), _run(1, 0.04)],
                             5.0: [_run(5, 0.02)]})
    by_loss = {r["loss_percent"]: r for r in rows}
    assert [r["goodput_vs_lossless"] for r in by_loss[1.0]["rounds"]] == [0.8, 0.9, 0.5]
    assert by_loss[1.0]["goodput_vs_lossless"] == 0.8
    assert by_loss[1.0]["goodput_gbps"] == 0.08  # the row's detail is the first round's run
    assert by_loss[1.0]["median_goodput_gbps"] == 0.045 and by_loss[0.0]["median_goodput_gbps"] == 0.08
    assert by_loss[0.0]["goodput_vs_lossless"] == 1.0
    assert by_loss[5.0]["goodput_vs_lossless"] == 0.2 and "rounds" not in by_loss[5.0]  # ran once: round 1's ref
    assert all(r["correct"] for r in rows)


def test_a_failed_or_inexact_round_gives_no_ratio_and_marks_the_rate() -> None:
    rows = paired_loss_rows({0.0: [_run(0, 0.10), _run(0, 0.05, correct=False)],
                             1.0: [_run(1, 0.07), {"loss_percent": 1.0, "error": "switch died"}]})
    by_loss = {r["loss_percent"]: r for r in rows}
    one = by_loss[1.0]
    assert [r.get("goodput_vs_lossless") for r in one["rounds"]] == [0.7, None]
    assert one["rounds"][1]["error"] == "switch died"
    assert one["goodput_vs_lossless"] == 0.7 and one["correct"] is False
    assert by_loss[0.0]["correct"] is False
