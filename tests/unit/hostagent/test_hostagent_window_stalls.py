"""Where an exchange waits: for the next chunk's slot, for room in the window, or in the drain after the last new
chunk; and why the pool is twice the window (a lost chunk blocks its slot's next use, not every later send).

Scripted RESULT arrivals and losses on a scripted clock; expected values worked out by hand from the rules in
docs/protocol.md ("Flow control and loss recovery")."""

from __future__ import annotations

import pytest

from hostagent.congestion import CongestionWindow
from hostagent.transport import Frame, Transport
from hostagent.window import SlotVersions, SlotWindow
from hostagent.worker import Worker


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _window(n: int, pool: int, clock: Clock, congestion: CongestionWindow | None = None,
            fast_recovery: bool = False) -> SlotWindow:
    return SlotWindow(n, SlotVersions(pool), timeout=1.0, max_retries=3, clock=clock, max_timeout=4.0,
                      congestion=congestion, fast_recovery=fast_recovery)


def test_time_blocked_on_the_window_on_a_slot_and_the_drain_are_charged_to_their_cause() -> None:
    clock = Clock()
    w = _window(4, 2, clock)  # no congestion window: the window is the pool, 2 chunks
    assert [s.seq for s in w.start()] == [0, 1]  # t = 0: both slots in use, chunk 2 waits for the window
    clock.t = 0.01
    assert w.complete(1, 1, 0) == []  # room in the window, but chunk 2's slot (0) still holds chunk 0
    clock.t = 0.05
    assert [s.seq for s in w.complete(0, 0, 0)] == [2, 3]  # the last new chunks leave at t = 0.05
    clock.t = 0.08
    assert w.complete(0, 2, 1) == []
    assert w.drain == 0.0  # not finished yet
    clock.t = 0.09
    assert w.complete(1, 3, 1) == [] and w.finished
    assert w.blocked_window == pytest.approx(0.01)
    assert w.blocked_slot == pytest.approx(0.04)
    assert w.drain == pytest.approx(0.04)  # from t = 0.05 to the last RESULT at t = 0.09


def _unanswered_chunk_zero(pool: int, window: int) -> list[int]:
    """Chunks 0..window-1 sent; chunk 0's RESULT never comes (lost), chunks 1..window-1 answered in order:
    which new chunks leave meanwhile."""
    clock = Clock()
    cw = CongestionWindow(window, initial=window, min_window=window)
    w = _window(4 * window, pool, clock, congestion=cw)
    assert [s.seq for s in w.start()] == list(range(window))
    sent = []
    for seq in range(1, window):
        clock.t += 0.001
        sent += [s.seq for s in w.complete(seq % pool, seq, (seq // pool) & 1)]
    return sent


def test_a_pool_as_large_as_the_window_stalls_every_send_behind_one_unanswered_chunk() -> None:
    # chunk 8 needs slot 0, still chunk 0's: in order, nothing after it leaves either
    assert _unanswered_chunk_zero(pool=8, window=8) == []


def test_a_pool_twice_the_window_keeps_sending_until_the_unanswered_chunks_slot_comes_round_again() -> None:
    # the window holds chunk 0 and 7 more: each RESULT of 1..7 lets one new chunk out, 8..14 (slots 8..14)
    assert _unanswered_chunk_zero(pool=16, window=8) == list(range(8, 15))


class _NoWire(Transport):
    def send(self, frame: Frame) -> None:
        raise AssertionError("nothing is sent in this test")

    def recv(self, timeout: float) -> bytes | None:
        return None


@pytest.mark.parametrize(("pool", "max_window", "cap"), [
    (64, None, 64),  # by default the window may grow to the pool
    (16, None, 16),
    (64, 32, 32),  # a pool twice the window
    (64, 100, 64),  # never more in flight than the pool
])
def test_the_workers_window_ceiling_is_the_pool_or_max_window(pool: int, max_window: int | None, cap: int) -> None:
    w = Worker(1, 0, n_workers=2, transport=_NoWire(), pool_size=pool, max_window=max_window)
    assert w.congestion is not None and w.congestion.max_window == cap
    assert w.congestion.min_window == min(8, cap)
