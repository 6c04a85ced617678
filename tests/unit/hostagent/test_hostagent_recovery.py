"""Loss recovery without timers (RACK, RFC 8985, on the slot window) and the congestion window (AIMD with a delay
signal): what is resent when, what is counted as fast or as a timer expiry, and how the window moves.

Expected values follow the rules as documented (docs/protocol.md, "Flow control"), worked out by hand here."""

from __future__ import annotations

import pytest

from hostagent.congestion import CongestionWindow
from hostagent.exceptions import AllReduceTimeoutError
from hostagent.window import RttEstimator, Send, SlotVersions, SlotWindow


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _rack(n_chunks: int, n_slots: int, clock: Clock, *, rtt: RttEstimator | None = None,
          congestion: CongestionWindow | None = None, timeout: float = 1.0, retries: int = 5) -> SlotWindow:
    return SlotWindow(n_chunks, SlotVersions(n_slots), timeout=timeout, max_retries=retries, clock=clock,
                      max_timeout=4.0, rtt=rtt, congestion=congestion)


def test_a_later_result_resends_the_overtaken_chunk_at_once_not_on_its_timer() -> None:
    clock = Clock()
    w = _rack(8, 4, clock)
    assert [s.seq for s in w.start()] == [0, 1, 2, 3]  # all sent at t = 0
    clock.t = 0.01
    sends = w.complete(1, 1, 0)  # chunk 1 answered while chunk 0 (sent before it) is not: chunk 0 was lost
    assert sends == [Send(0, 0, 0, retry=1)]
    assert (w.fast_retransmissions, w.timer_retransmissions, w.retransmissions) == (1, 0, 1)
    # chunk 0 was resent after chunks 2 and 3: their RESULTs say nothing about the resend
    clock.t = 0.02
    assert w.complete(2, 2, 0) == []
    assert w.complete(3, 3, 0) == []
    assert w.fast_retransmissions == 1
    clock.t = 0.03
    assert w.complete(0, 0, 0) == [Send(0, 4, 1), Send(1, 5, 1), Send(2, 6, 1), Send(3, 7, 1)]
    assert w.timer_retransmissions == 0


def test_an_overtaken_chunk_younger_than_the_round_trip_plus_allowance_waits_for_its_rack_timer() -> None:
    clock = Clock()
    rtt = RttEstimator(1.0, min_rto=0.01, max_rto=4.0)
    rtt.sample(0.04)  # smallest round trip 40 ms: reordering allowance 10 ms
    w = _rack(4, 2, clock, rtt=rtt)
    w.start()
    clock.t = 0.004
    assert [s.seq for s in w.complete(0, 0, 0)] == [2]  # chunk 2 leaves at t = 4 ms
    clock.t = 0.006
    assert [s.seq for s in w.complete(1, 1, 0)] == [3]  # chunk 3 at t = 6 ms
    clock.t = 0.05
    # chunk 3's RESULT (round trip 44 ms) overtakes chunk 2, sent 2 ms earlier: 46 ms old < 44 + 10 ms
    assert w.complete(1, 3, 1) == []
    assert w.next_deadline() == pytest.approx(0.004 + 0.044 + 0.01)
    clock.t = 0.057
    assert w.expired() == []
    clock.t = 0.058
    assert [(s.seq, s.retry) for s in w.expired()] == [(2, 1)]
    assert (w.fast_retransmissions, w.timer_retransmissions) == (1, 0)


def test_a_lost_tail_has_nothing_after_it_and_falls_back_to_a_probe_then_the_timer() -> None:
    clock = Clock()
    rtt = RttEstimator(0.1, min_rto=0.01, max_rto=4.0)
    cw = CongestionWindow(4, initial=4)
    w = _rack(4, 4, clock, rtt=rtt, timeout=0.1, congestion=cw)
    w.start()
    clock.t = 0.01
    assert w.complete(0, 0, 0) == []  # chunks 1-3, the last ones, were sent after chunk 0: not overtaken
    clock.t = 0.1
    # all three timers expire: one probe, the newest chunk; the window and the RTO stay
    assert [s.seq for s in w.expired()] == [3]
    assert (w.probes, w.timer_retransmissions, w.retransmissions) == (1, 0, 1)
    assert cw.window == 4 and rtt.rto == pytest.approx(0.1)
    clock.t = 0.15
    # the probe's RESULT: chunks 1 and 2, sent before chunk 3's probe, are overtaken and resent at once
    assert [s.seq for s in w.complete(3, 3, 0)] == [1, 2]
    assert w.fast_retransmissions == 2
    clock.t = 0.4
    # both lost again and nothing answers: a probe first (the newest, 2), then a full timeout resends the oldest
    assert [s.seq for s in w.expired()] == [2]
    clock.t = 0.8
    assert [s.seq for s in w.expired()] == [1]
    assert (w.probes, w.timer_retransmissions) == (2, 1)
    assert cw.window == 1 and rtt.rto == pytest.approx(0.2)  # halved by the RACK loss, then by the timeout
    clock.t = 0.85
    # chunk 1's RESULT may answer its first send, which came before chunk 2's probe: nothing is overtaken
    assert w.complete(1, 1, 0) == []
    clock.t = 2.0
    # a RESULT came since the last probe: chunk 2's timer sends a probe again, not a full timeout
    assert [s.seq for s in w.expired()] == [2]
    assert (w.probes, w.timer_retransmissions, w.fast_retransmissions) == (3, 1, 2)


def test_a_chunk_lost_again_after_its_fast_resend_is_found_by_the_next_later_result() -> None:
    clock = Clock()
    w = _rack(6, 2, clock)
    w.start()  # chunks 0, 1
    clock.t = 0.01
    assert w.complete(1, 1, 0) == [Send(0, 0, 0, retry=1)]  # chunk 2 must wait: slot 0 is still chunk 0's
    clock.t = 0.02
    assert w.complete(0, 0, 0) == [Send(0, 2, 1), Send(1, 3, 1)]
    clock.t = 0.03
    assert w.complete(1, 3, 1) == [Send(0, 2, 1, retry=1)]  # 3 answered, 2 (sent before it) not
    clock.t = 0.04
    assert w.complete(0, 2, 1) == [Send(0, 4, 0), Send(1, 5, 0)]
    assert w.fast_retransmissions == 2 and w.timer_retransmissions == 0


def test_fast_resends_count_against_max_retries() -> None:
    clock = Clock()
    w = _rack(4, 4, clock, retries=1)
    w.start()
    clock.t = 0.01
    assert [s.seq for s in w.complete(1, 1, 0)] == [0]
    clock.t = 2.0  # the resend of chunk 0 is lost too and its timer runs out: one retry was all it had
    with pytest.raises(AllReduceTimeoutError, match="missing"):
        w.expired()


def test_the_congestion_window_limits_chunks_in_flight_and_grows_with_results() -> None:
    clock = Clock()
    cw = CongestionWindow(8, initial=2, delay_gain=None)
    w = _rack(20, 8, clock, congestion=cw)
    sent = w.start()
    assert [s.seq for s in sent] == [0, 1] and w.outstanding == 2
    clock.t = 0.01
    # slow start: each RESULT adds one chunk to the window, so each RESULT sends two chunks
    assert [s.seq for s in w.complete(0, 0, 0)] == [2, 3]
    assert [s.seq for s in w.complete(1, 1, 0)] == [4, 5]
    assert cw.window == 4 and w.outstanding == 4


def test_aimd_slow_start_additive_increase_and_one_halving_per_loss_episode() -> None:
    cw = CongestionWindow(64, initial=4, delay_gain=None, loss_tolerance=None)  # TCP's rule: every episode halves
    for stamp in range(1, 5):
        cw.on_result(stamp, 0.01, 10)
    assert cw.window == 8  # slow start: +1 per RESULT
    assert cw.on_loss(stamp=9, next_stamp=20)
    assert cw.window == 4 and cw.ssthresh == 4
    assert not cw.on_loss(stamp=15, next_stamp=21)  # sent before the decrease: the same episode
    assert cw.window == 4
    cw.on_result(20, 0.01, 22)
    assert cw.window == pytest.approx(4.25)  # congestion avoidance: +1/window per RESULT
    assert cw.on_loss(stamp=21, next_stamp=30)  # sent after the decrease: a new episode
    assert cw.window == pytest.approx(2.125) and cw.stats.loss_decreases == 2
    cw.on_timeout(next_stamp=31)
    assert cw.window == pytest.approx(1.0625) == cw.ssthresh and cw.stats.timeout_resets == 1
    assert not cw.on_loss(stamp=30, next_stamp=32)  # sent before the timeout's decrease
    assert cw.on_loss(stamp=31, next_stamp=33)
    assert cw.window == 1  # never below the minimum


def test_losses_within_the_tolerance_keep_the_window_and_a_run_of_them_halves_it() -> None:
    cw = CongestionWindow(64, initial=16, loss_tolerance=0.25)
    cw.on_result(1, 0.01, 20)  # slow start: 17; the round trip ends when a chunk sent from stamp 20 is answered
    assert cw.window == 17
    for stamp in range(2, 6):  # four losses in this round trip: 4 <= 0.25 x 17, random loss
        assert not cw.on_loss(stamp=stamp, next_stamp=20)
    assert cw.window == 17 and cw.stats.tolerated_losses == 4 and cw.stats.loss_decreases == 0
    assert cw.on_loss(stamp=6, next_stamp=20)  # the fifth: more than random loss explains, a queue overflowed
    assert cw.window == 8.5 == cw.ssthresh and cw.stats.loss_decreases == 1
    assert not cw.on_loss(stamp=7, next_stamp=21)  # over the tolerance, but sent before the decrease: same episode
    assert cw.window == 8.5
    cw.on_result(20, 0.01, 40)  # a chunk sent after the round began: a new round trip, its count starts again
    assert cw.window == pytest.approx(8.5 + 1 / 8.5)
    assert not cw.on_loss(stamp=30, next_stamp=40)  # 1 <= 0.25 x 8.6
    assert cw.stats.tolerated_losses == 5


def test_random_loss_of_every_ninth_chunk_lets_the_window_reach_the_pool_only_with_the_tolerance() -> None:
    """11% of the chunks of every round trip lost (1% on each of the 12 links a round of 4 workers crosses):
    AIMD halving on each episode stays near 1.2/sqrt(0.11) ~ 4 chunks (here at its floor of 8); with the
    tolerance the window grows to the pool. Round trips are simulated as windows of chunks sent and answered."""
    def run(tolerance: float | None) -> float:
        cw = CongestionWindow(64, initial=8, min_window=8, loss_tolerance=tolerance)
        stamp = 0
        for _round in range(200):
            first, n = stamp + 1, cw.allowed
            stamp += n  # this round's chunks, sent back to back
            for k in range(first, first + n):
                if k % 9 == 0:
                    cw.on_loss(k, stamp + 1)
                else:
                    cw.on_result(k, 0.01, stamp + 1)
        return cw.window
    assert run(0.25) == 64
    assert run(None) < 12


def test_restart_forgets_the_previous_exchanges_stamps() -> None:
    cw = CongestionWindow(64, initial=32, loss_tolerance=None)
    assert cw.on_loss(stamp=100, next_stamp=200) and cw.window == 16
    cw.restart()  # the next exchange's stamps start from 1: its first loss is a new episode
    assert cw.on_loss(stamp=3, next_stamp=5) and cw.window == 8


def test_round_trips_above_twice_the_smallest_shrink_the_window_once_per_round_trip() -> None:
    cw = CongestionWindow(64, initial=40, delay_gain=2.0, delay_beta=0.5)
    cw.ssthresh = 40  # congestion avoidance from the start
    cw.on_result(1, 0.010, 100)  # smallest round trip: 10 ms
    assert cw.window == pytest.approx(40 + 1 / 40)
    w0 = cw.window
    cw.on_result(2, 0.040, 100)  # 40 ms > 2 x 10 ms: cut by 0.5 x (40 - 20) / 40 = 25 %
    assert cw.window == pytest.approx(w0 * 0.75) and cw.stats.delay_decreases == 1
    w1 = cw.window
    cw.on_result(3, 0.040, 101)  # sent before the cut took effect: no second cut in the same round trip
    assert cw.window == pytest.approx(w1 + 1 / w1)
    cw.on_result(100, 0.100, 102)  # sent after it: cut again, at most by half
    assert cw.window == pytest.approx((w1 + 1 / w1) * (1 - min(0.5, 0.5 * 80 / 100)))
    assert cw.stats.delay_decreases == 2


def test_window_limits_are_checked() -> None:
    with pytest.raises(ValueError):
        CongestionWindow(0)
    cw = CongestionWindow(3, initial=10, min_window=0.2)
    assert cw.window == 3 and cw.min_window == 1 and cw.allowed == 3


def test_the_retransmission_timeout_is_at_least_twice_the_smoothed_round_trip() -> None:
    rtt = RttEstimator(1.0, min_rto=0.001, max_rto=4.0)
    for _ in range(200):
        rtt.sample(0.1)  # steady round trips: RTTVAR decays towards 0, RFC 6298 alone would give about SRTT
    assert rtt.srtt == pytest.approx(0.1) and rtt.rttvar < 1e-6
    assert rtt.rto == pytest.approx(0.2)
    assert RttEstimator(1.0, min_rto=0.3).rto == 1.0 and RttEstimator(0.1, min_rto=0.3).rto == 0.3


def test_the_retransmission_timeout_remembers_recent_round_trip_spikes() -> None:
    rtt = RttEstimator(1.0, min_rto=0.001, max_rto=4.0, peak_decay=0.99)
    rtt.sample(0.4)  # one spike
    for _ in range(50):
        rtt.sample(0.1)
    # SRTT and RTTVAR have mostly forgotten it; the peak has decayed by 0.99 per sample only
    assert rtt.peak_rtt == pytest.approx(0.4 * 0.99**50)
    assert rtt.rto == pytest.approx(1.5 * 0.4 * 0.99**50)
    for _ in range(500):
        rtt.sample(0.1)
    assert rtt.rto == pytest.approx(0.2)  # the spike is forgotten: 2 SRTT again


def test_a_result_right_after_a_resend_answers_the_first_send_and_is_sampled_from_it() -> None:
    clock = Clock()
    rtt = RttEstimator(0.1, min_rto=0.01, max_rto=4.0, peak_factor=0.0)
    w = _rack(4, 2, clock, rtt=rtt, timeout=0.1)
    w.start()
    clock.t = 0.01
    w.complete(0, 0, 0)  # chunk 2 leaves at t = 10 ms
    clock.t = 0.05
    w.complete(1, 1, 0)  # chunk 3 at t = 50 ms
    clock.t = 0.09
    w.complete(0, 2, 1)  # round trip 80 ms: the smallest so far
    assert rtt.min_rtt == pytest.approx(0.08)
    clock.t = 0.4  # chunk 3's timer: a probe resends it at t = 400 ms
    assert [s.seq for s in w.expired()] == [3]
    clock.t = 0.41  # its RESULT 10 ms later, under a quarter of 80 ms: the first send's, 360 ms after it
    w.complete(1, 3, 1)
    assert w.spurious == 1 and rtt.samples == 2 and rtt.srtt == pytest.approx(0.875 * 0.08 + 0.125 * 0.36)
    assert w.finished


def test_after_a_probe_a_full_timeout_waits_a_whole_timeout_for_every_chunk() -> None:
    """RACK-TLP (RFC 8985, 7.3): once the probe is out, the retransmission timer is rearmed, so a chunk whose own
    timer would have run out a moment after the probe does not turn the probe into a full timeout (which would
    halve the window) before the probe could be answered."""
    clock = Clock()
    w = _rack(6, 4, clock, timeout=1.0)
    assert [s.seq for s in w.start()] == [0, 1, 2, 3]  # timers at t = 1.0
    clock.t = 0.01
    assert [s.seq for s in w.complete(0, 0, 0)] == [4]  # timer at 1.01
    clock.t = 0.02
    assert [s.seq for s in w.complete(1, 1, 0)] == [5]  # timer at 1.02
    clock.t = 1.0
    assert [(s.seq, s.retry) for s in w.expired()] == [(5, 1)]  # chunks 2, 3 expired: the probe is the newest
    clock.t = 1.015  # chunk 4's own timer (1.01) has passed, but the probe has had no round trip yet
    assert w.expired() == []
    assert w.timer_retransmissions == 0 and w.next_deadline() == pytest.approx(2.0)
    clock.t = 2.0  # a whole timeout with no RESULT: now a full timeout, the oldest chunk only
    assert [(s.seq, s.retry) for s in w.expired()] == [(2, 1)]
    assert (w.probes, w.timer_retransmissions) == (1, 1)


def test_in_the_drain_a_probe_goes_two_smoothed_round_trips_after_the_last_result() -> None:
    """Once every chunk is out, nothing sent later can show a loss: the probe timer restarts at each RESULT and
    fires 2 SRTT after the last one, not at the chunks' own timers (here the first chunks' skew allowance)."""
    clock = Clock()
    rtt = RttEstimator(1.0, min_rto=0.01, max_rto=4.0)
    rtt.sample(0.04)  # SRTT 40 ms: probe timeout 80 ms
    w = _rack(4, 4, clock, rtt=rtt, timeout=1.0)
    assert [s.seq for s in w.start()] == [0, 1, 2, 3]  # every chunk out: the drain; their own timers at t = 1.0
    assert w.next_deadline() == pytest.approx(1.0)  # no RESULT yet: no probe timer
    clock.t = 0.05
    assert w.complete(0, 0, 0) == []
    assert w.next_deadline() == pytest.approx(0.13)
    clock.t = 0.10
    assert w.complete(1, 1, 0) == []  # a RESULT restarts it
    assert w.next_deadline() == pytest.approx(0.18)
    clock.t = 0.179
    assert w.expired() == []
    clock.t = 0.18
    assert [(s.seq, s.retry) for s in w.expired()] == [(3, 1)]  # the newest chunk
    assert (w.probes, w.timer_retransmissions) == (1, 0)
    assert w.next_deadline() == pytest.approx(1.18)  # every timer restarted with the probe: a whole timeout


def test_mid_stream_a_result_arms_no_probe_timer() -> None:
    clock = Clock()
    rtt = RttEstimator(1.0, min_rto=0.01, max_rto=4.0, peak_factor=0.0)
    rtt.sample(0.04)  # RTO = SRTT + 4 RTTVAR = 0.04 + 0.08
    w = _rack(8, 4, clock, rtt=rtt, timeout=1.0)
    w.start()
    clock.t = 0.05
    assert [s.seq for s in w.complete(0, 0, 0)] == [4]  # chunks 5..7 still to send
    assert w.next_deadline() == pytest.approx(0.05 + 0.12)  # chunk 4's own timer



def _slow_timers() -> RttEstimator:
    """SRTT 40 ms (probe timeout 80 ms) and a retransmission timeout of 0.4 s (10x the largest recent round trip, as
    other workers' stalls make it on the emulated fabric)."""
    rtt = RttEstimator(1.0, min_rto=0.01, max_rto=4.0, peak_factor=10.0)
    rtt.sample(0.04)
    return rtt


def test_a_lost_resend_of_a_chunk_blocking_its_slot_gets_the_probe_two_srtt_after_the_resend() -> None:
    """Pool = window = 4: chunk 0 is lost, RACK resends it, and the resend is lost too. Chunk 4 waits for slot 0,
    so nothing later is sent that could show the second loss: as in the drain, the probe goes 2 SRTT after the
    last send, not at the resend's own timer (0.4 s later)."""
    clock = Clock()
    w = _rack(8, 4, clock, rtt=_slow_timers(), timeout=1.0)
    assert [s.seq for s in w.start()] == [0, 1, 2, 3]
    clock.t = 0.05
    for slot in (1, 2, 3):
        assert w.complete(slot, slot, 0) == []  # in order: chunk 4 waits for slot 0
    clock.t = 0.08  # past chunk 0's RACK timer (RTT 0.05 + a quarter of the smallest)
    assert [(s.seq, s.retry) for s in w.expired()] == [(0, 1)]
    assert w.next_deadline() == pytest.approx(0.16)
    clock.t = 0.159
    assert w.expired() == []
    clock.t = 0.16
    assert [(s.seq, s.retry) for s in w.expired()] == [(0, 2)]
    assert (w.fast_retransmissions, w.probes, w.timer_retransmissions) == (1, 1, 0)
    clock.t = 0.2
    assert [s.seq for s in w.complete(0, 0, 0)] == [4, 5, 6, 7]


def test_a_result_that_frees_the_blocking_slot_disarms_the_probe() -> None:
    clock = Clock()
    w = _rack(12, 4, clock, rtt=_slow_timers(), timeout=1.0)
    w.start()
    clock.t = 0.05
    for slot in (1, 2, 3):
        w.complete(slot, slot, 0)
    clock.t = 0.055
    assert [s.seq for s in w.complete(0, 0, 0)] == [4, 5, 6, 7]  # chunk 0 was late, not lost: chunks flow
    assert w.next_deadline() == pytest.approx(0.455)  # chunk 4's own timer, no probe timer



def _lossy_exchange(seed: int) -> None:
    """One scripted exchange for the test below: sends and RESULTs lost at random, round trips 30-90 ms."""
    import heapq
    import random

    rng = random.Random(seed)
    clock = Clock()
    rtt = RttEstimator(1.0, min_rto=0.01, max_rto=4.0, peak_factor=10.0)
    rtt.sample(0.04)
    w = _rack(40, 4, clock, rtt=rtt, timeout=1.0, retries=50)
    arrivals: list[tuple[float, int, Send]] = []
    posted = 0

    def post(sends: list[Send]) -> None:
        nonlocal posted
        for s in sends:
            if rng.random() >= 0.2:
                posted += 1
                heapq.heappush(arrivals, (clock.t + rng.uniform(0.03, 0.09), posted, s))

    post(w.start())
    for _ in range(20_000):
        if w.finished:
            return
        deadline = w.next_deadline()
        if arrivals and (deadline is None or arrivals[0][0] <= deadline):
            clock.t, _, s = heapq.heappop(arrivals)
            post(w.try_complete(s.slot, s.seq, s.version) or [])  # None: a resend's duplicate RESULT
            continue
        assert deadline is not None
        clock.t = max(clock.t, deadline)
        sent = w.expired()
        post(sent)
        if not sent:
            after = w.next_deadline()
            assert after is None or after > clock.t, (seed, clock.t, after)
    raise AssertionError(f"seed {seed}: the exchange did not finish")


def test_timers_never_stand_in_the_past_after_expired_returns_nothing() -> None:
    """A scripted lossy exchange (pool = window = 4, a fifth of sends or RESULTs lost): the caller sleeps until
    `next_deadline()`, so after `expired()` returns nothing that deadline must lie ahead (a timer left in the past
    would make it spin), and every chunk completes."""
    for seed in range(200):
        _lossy_exchange(seed)
