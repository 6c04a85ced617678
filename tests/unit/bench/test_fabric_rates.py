"""The link-rate sweep's arithmetic (bench.fabric_runs.rates): bandwidth bounds, efficiency, resent fractions,
speedups and the highest rate at 80% of the bound, on hand-made run reports."""

from __future__ import annotations

import pytest
from p4fabric.report import ModeSummary, RunReport, WorkerResult

from bench.fabric_runs.rates import bound_seconds, highest_rate, rate_rows, resent_fraction, speedups


def test_bound_is_the_host_link_bytes_over_both_directions_of_the_rate() -> None:
    # 25 Mbit/s each way: 6.25 MB up and 6.25 MB down take 2 s
    assert bound_seconds(12.5e6, 25.0) == pytest.approx(2.0)


def _report() -> RunReport:
    report = RunReport(topology="t", target="embedded", size=1 << 20, count=1, workers=["h1", "h2"])
    # totals over the step and the warm-up of the same size: 14 MB and 10 MB per all-reduce
    report.link_bytes = {"h1-leaf1": {"ring": 28_000_000, "in-network": 20_000_000},
                         "h2-leaf1": {"ring": 28_000_000, "in-network": 20_000_000}}
    report.modes = [ModeSummary("ring", 1, [6.0], 6.0, 0.1, True, 0, 0, 0, correct=True),
                    ModeSummary("in-network", 1, [4.0], 4.0, 0.1, True, 12, 0, 0, correct=True, fmt="int32")]
    report.worker_results = [
        WorkerResult(h, i, "in-network", [4.0], True,
                     stats={"packets_sent": 600, "retransmissions": 6, "fast_retransmissions": 5,
                            "timer_retransmissions": 1}, fmt="int32")
        for i, h in enumerate(("h1", "h2"))]
    return report


def test_rows_carry_bound_efficiency_and_resends() -> None:
    report = _report()
    assert resent_fraction(report, "in-network") == pytest.approx(12 / 1200)
    assert resent_fraction(report, "ring") is None  # TCP's resends are not counted
    rows = {r["mode"]: r for r in rate_rows(report, 10.0)}
    innet = rows["in-network"]
    assert innet["bound_seconds"] == pytest.approx(10e6 * 8 / 20e6)  # 4 s
    assert innet["efficiency"] == pytest.approx(1.0)
    assert (innet["fast_retransmissions"], innet["timer_retransmissions"]) == (10, 2)
    assert rows["ring"]["efficiency"] == pytest.approx(14e6 * 8 / 20e6 / 6.0)
    assert speedups(list(rows.values())) == {"ring_over_int32": 1.5}
    assert "bound_seconds" not in rate_rows(report, None)[0]  # unshaped: no bound


def test_highest_rate_at_80_percent_needs_a_correct_row_at_or_above_the_threshold() -> None:
    rows = [{"mode": "in-network", "bw_mbps": 5.0, "correct": True, "efficiency": 0.95},
            {"mode": "in-network", "bw_mbps": 25.0, "correct": True, "efficiency": 0.8},
            {"mode": "in-network", "bw_mbps": 50.0, "correct": True, "efficiency": 0.79},
            {"mode": "in-network", "bw_mbps": 100.0, "correct": False, "efficiency": 0.9},
            {"mode": "ring", "bw_mbps": 100.0, "correct": True, "efficiency": 0.9}]
    assert highest_rate(rows) == 25.0
    assert highest_rate(rows[2:4]) is None
