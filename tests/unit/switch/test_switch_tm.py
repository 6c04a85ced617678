"""Traffic manager: depth, tail drop, strict priority, rate, pause and queue metadata, on a fake clock."""

from __future__ import annotations

import pytest

from p4switch.switch.tm import QueueConfigError, TrafficManager


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class Item:
    def __init__(self, name: str) -> None:
        self.name = name
        self.enq_qdepth = -1
        self.enq_timestamp = -1


def drain(tm: TrafficManager) -> list[tuple[int, int, str, int]]:
    out = []
    while (got := tm.dequeue(timeout=0)) is not None:
        port, prio, item, depth = got
        out.append((port, prio, item.name, depth))
    return out


def test_fifo_with_enqueue_and_dequeue_depths() -> None:
    clock = FakeClock()
    tm = TrafficManager(clock=clock, clock_us=lambda: 5)
    items = [Item(str(i)) for i in range(3)]
    for it in items:
        assert tm.enqueue(1, 0, it)
    assert [it.enq_qdepth for it in items] == [0, 1, 2]
    assert all(it.enq_timestamp == 5 for it in items)
    assert drain(tm) == [(1, 0, "0", 2), (1, 0, "1", 1), (1, 0, "2", 0)]


def test_tail_drop_at_depth() -> None:
    tm = TrafficManager(clock=FakeClock())
    tm.set_queue_depth(2, 2)
    assert [tm.enqueue(2, 0, Item(str(i))) for i in range(4)] == [True, True, False, False]
    (stats,) = [s for s in tm.stats() if s.port == 2]
    assert stats.dropped == 2 and stats.depth == 2 and stats.capacity == 2


def test_unbounded_never_drops() -> None:
    tm = TrafficManager(clock=FakeClock(), unbounded=True, default_depth=1)
    tm.set_queue_rate(1, 1)
    assert all(tm.enqueue(1, 0, Item(str(i))) for i in range(500))
    assert len(drain(tm)) == 500  # no rate in unbounded (file) mode either


def test_higher_priority_value_is_served_first() -> None:
    tm = TrafficManager(clock=FakeClock(), priority_queues=3)
    tm.enqueue(1, 0, Item("low"))
    tm.enqueue(1, 2, Item("high"))
    tm.enqueue(1, 1, Item("mid"))
    assert [name for _, _, name, _ in drain(tm)] == ["high", "mid", "low"]


def test_rate_limit_spaces_departures() -> None:
    clock = FakeClock()
    tm = TrafficManager(clock=clock)
    tm.set_queue_rate(1, 10)  # one packet per 100 ms
    for i in range(3):
        tm.enqueue(1, 0, Item(str(i)))
    assert [n for _, _, n, _ in drain(tm)] == ["0"]
    clock.t += 0.1
    assert [n for _, _, n, _ in drain(tm)] == ["1"]
    clock.t += 0.25
    assert [n for _, _, n, _ in drain(tm)] == ["2"]


def test_rate_limited_high_priority_lets_lower_priority_through() -> None:
    clock = FakeClock()
    tm = TrafficManager(clock=clock, priority_queues=2)
    tm.set_queue_rate(1, 1, priority=1)
    tm.enqueue(1, 1, Item("h0"))
    tm.enqueue(1, 1, Item("h1"))
    tm.enqueue(1, 0, Item("l0"))
    assert [n for _, _, n, _ in drain(tm)] == ["h0", "l0"]


def test_pause_holds_a_queue_until_it_expires() -> None:
    clock = FakeClock()
    tm = TrafficManager(clock=clock, priority_queues=2)
    tm.pause(1, 1, 0.5)
    tm.enqueue(1, 1, Item("paused"))
    tm.enqueue(1, 0, Item("other"))
    assert [n for _, _, n, _ in drain(tm)] == ["other"]
    clock.t += 0.6
    assert [n for _, _, n, _ in drain(tm)] == ["paused"]


def test_bad_admin_arguments() -> None:
    tm = TrafficManager(priority_queues=2)
    with pytest.raises(QueueConfigError, match="priority 2 out of range"):
        tm.set_queue_rate(1, 100, priority=2)
    with pytest.raises(QueueConfigError):
        tm.set_queue_depth(1, -1)
    with pytest.raises(QueueConfigError):
        TrafficManager(priority_queues=0)


def test_close_wakes_a_blocked_dequeue() -> None:
    import threading

    tm = TrafficManager()
    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(tm.dequeue()))
    t.start()
    tm.close()
    t.join(timeout=5)
    assert result == [None]
    assert not tm.enqueue(1, 0, Item("late"))


class FakeNsClock:
    def __init__(self) -> None:
        self.ns = 7_000_000_000

    def __call__(self) -> int:
        return self.ns


def test_poll_on_a_nanosecond_clock_spaces_departures_and_stamps_from_the_epoch() -> None:
    clock = FakeNsClock()
    tm = TrafficManager(clock_ns=clock, epoch_ns=2_000_000_000)
    tm.set_queue_rate(1, 10)  # one packet per 100 ms
    items = [Item(str(i)) for i in range(3)]
    for it in items:
        clock.ns += 1_500  # 1.5 us between enqueues
        assert tm.enqueue(1, 0, it)
    # (7 s + k * 1.5 us - 2 s) in whole microseconds
    assert [it.enq_timestamp for it in items] == [5_000_001, 5_000_003, 5_000_004]
    got, wake = tm.poll()
    assert got is not None and got[2].name == "0" and got[3] == 2
    got, wake = tm.poll()  # the next departure is 100 ms after the first one's
    assert got is None and wake == pytest.approx(0.1 - 3e-6, abs=1e-9)
    clock.ns += 50_000_000
    assert tm.poll()[0] is None
    clock.ns += 50_000_000
    got, _ = tm.poll()
    assert got is not None and got[2].name == "1"


def test_poll_keeps_a_departure_fixed_at_enqueue_after_the_rate_is_lifted() -> None:
    # BMv2 fixes a packet's send time when it is queued; lifting the rate does not release it earlier
    clock = FakeClock()
    tm = TrafficManager(clock=clock)
    tm.set_queue_rate(1, 2)  # 500 ms apart
    tm.enqueue(1, 0, Item("a"))
    tm.enqueue(1, 0, Item("b"))
    assert tm.poll()[0] is not None
    tm.set_queue_rate(1, 0)
    got, wake = tm.poll()
    assert got is None and wake == pytest.approx(0.5)
    clock.t += 0.5
    got, _ = tm.poll()
    assert got is not None and got[2].name == "b"


def test_poll_honours_a_pause_that_starts_after_the_packet_was_queued() -> None:
    clock = FakeClock()
    tm = TrafficManager(clock=clock)
    tm.enqueue(1, 0, Item("a"))
    tm.enqueue(1, 0, Item("b"))
    assert tm.poll()[0] is not None  # due: no pause yet
    clock.t += 0.001
    tm.pause(1, 0, 0.25)
    got, wake = tm.poll()
    assert got is None and wake == pytest.approx(0.25)
    clock.t += 0.25
    got, _ = tm.poll()
    assert got is not None and got[2].name == "b"


def test_the_refused_port_gets_no_queue() -> None:
    # v1model's drop port (511) is never a queue: the switch builds its manager with it refused
    tm = TrafficManager(clock=FakeClock(), refused_port=511)
    assert not tm.enqueue(511, 0, Item("dropped"))
    assert tm.enqueue(3, 0, Item("kept"))
    assert [s.port for s in tm.stats()] == [3] and len(tm) == 1
