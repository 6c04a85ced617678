"""The slot window: self-clocking, version alternation across calls, timers with backoff, the give-up error, and
in-order sending (tests/unit/hostagent/test_hostagent_recovery.py covers RACK and the congestion window)."""

from __future__ import annotations

import pytest

from hostagent.exceptions import AllReduceTimeoutError
from hostagent.window import RttEstimator, Send, SlotVersions, SlotWindow


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _window(n: int, versions: SlotVersions, clock: Clock, retries: int = 3) -> SlotWindow:
    """SwitchML's window: every slot in flight, losses found by timers only (RACK has its own tests below)."""
    return SlotWindow(n, versions, timeout=0.1, max_retries=retries, clock=clock, backoff=2.0, max_timeout=0.3,
                      fast_recovery=False)


def test_first_window_is_one_chunk_per_slot() -> None:
    w = _window(10, SlotVersions(4), Clock())
    assert [(s.slot, s.seq, s.version) for s in w.start()] == [(0, 0, 0), (1, 1, 0), (2, 2, 0), (3, 3, 0)]
    assert w.outstanding == 4


def test_result_clocks_out_the_slots_next_chunk_with_the_other_version() -> None:
    v = SlotVersions(4)
    w = _window(10, v, Clock())
    w.start()
    assert w.complete(0, 0, 0) == [Send(0, 4, 1)]
    assert w.expects(0, 4, 1) and not w.expects(0, 0, 0) and not w.expects(0, 4, 0)
    # chunks leave in order: chunk 5 (slot 1) waits for chunk 1's RESULT even if chunk 2's comes first
    assert w.complete(2, 2, 0) == [] and w.outstanding == 3
    assert w.complete(1, 1, 0) == [Send(1, 5, 1), Send(2, 6, 1)]
    with pytest.raises(ValueError):
        w.complete(1, 1, 0)  # a second RESULT for the same chunk must be filtered by expects()


def test_whole_run_and_versions_persist_across_calls() -> None:
    v = SlotVersions(4)
    for call in range(3):
        w = _window(6, v, Clock())
        pending = list(w.start())
        seen = []
        while pending:
            s = pending.pop(0)
            seen.append((s.slot, s.seq, s.version))
            pending += w.complete(s.slot, s.seq, s.version)
        assert w.finished and sorted(x[1] for x in seen) == list(range(6))
        # slots 0 and 1 carry two chunks per call, slots 2 and 3 one: versions keep alternating per use
        first = {slot: ver for slot, seq, ver in seen if seq < 4}
        assert first == {0: 0, 1: 0, 2: call % 2, 3: call % 2}
    assert v.bits == [0, 0, 1, 1]


def test_timeouts_back_off_and_give_up_listing_missing() -> None:
    clock = Clock()
    w = _window(6, SlotVersions(2), clock, retries=2)
    w.start()
    assert w.complete(0, 0, 0) == [Send(0, 2, 1)]  # slot 0 moves on to chunk 2
    assert w.expired() == []
    clock.t = 0.1
    due = w.expired()
    assert sorted((s.slot, s.seq, s.retry) for s in due) == [(0, 2, 1), (1, 1, 1)]
    clock.t = 0.25  # the second timeout is 0.2: not yet
    assert w.expired() == []
    clock.t = 0.31
    assert len(w.expired()) == 2 and w.retransmissions == 4
    clock.t = 10.0
    with pytest.raises(AllReduceTimeoutError) as info:
        w.expired()
    assert info.value.missing == [1, 2, 3, 4, 5]
    assert "5/6 chunks missing: 1, 2, 3, 4, 5" in str(info.value)


def test_retry_now_rearms_without_consuming_a_retry() -> None:
    clock = Clock()
    w = _window(1, SlotVersions(2), clock)
    w.start()
    again = w.retry_now(0)
    assert again is not None and again.seq == 0 and w.retransmissions == 1
    assert w.retry_now(1) is None


def test_rtt_estimator_follows_rfc6298_and_clamps() -> None:
    rtt = RttEstimator(0.05, min_rto=0.01, max_rto=1.0, peak_factor=0.0)  # the peak floor has its own test
    assert rtt.rto == 0.05 and rtt.srtt is None
    rtt.sample(0.1)
    assert rtt.srtt == 0.1 and rtt.rttvar == 0.05 and rtt.rto == pytest.approx(0.3)
    for _ in range(50):
        rtt.sample(0.001)
    assert rtt.rto == 0.01  # clamped at the floor
    for _ in range(5):
        rtt.sample(5.0)
    assert rtt.rto == 1.0  # and at the ceiling


def test_window_samples_only_unretransmitted_chunks() -> None:
    clock = Clock()
    rtt = RttEstimator(0.1, min_rto=0.001, max_rto=2.0)
    w = SlotWindow(4, SlotVersions(2), timeout=0.1, max_retries=5, clock=clock, rtt=rtt, fast_recovery=False)
    w.start()
    clock.t = 0.02
    nxt = w.complete(0, 0, 0)
    assert rtt.samples == 0  # the first window's RESULTs include the other workers' start skew: not sampled
    assert [s.seq for s in nxt] == [2]
    clock.t = 0.04
    nxt = w.complete(0, 2, 1)
    assert rtt.samples == 1 and rtt.srtt == pytest.approx(0.02) and rtt.min_rtt == pytest.approx(0.02)
    assert nxt == []
    clock.t = 0.2
    rto = rtt.rto
    assert {s.seq for s in w.expired()} == {1}
    assert rtt.rto == pytest.approx(2 * rto)  # a timeout backs the estimate off until a clean sample
    w.complete(1, 1, 0)
    assert rtt.samples == 1  # Karn: a retransmitted chunk's round trip is ambiguous
