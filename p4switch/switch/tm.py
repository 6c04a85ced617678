"""Traffic manager: per egress port and priority FIFO queues with a depth (packets) and a rate (packets/s).

Modelled on BMv2's `QueueingLogicPriRL` as simple_switch uses it: a packet's departure time is fixed when it is
enqueued (`max(now, previous departure + 1/rate)`), a full queue tail-drops, and the dequeuer serves the highest
priority queue whose head may depart. `standard_metadata.priority` p maps to BMv2's internal queue `n-1-p`, so a
larger priority value is served first. A queue can also be paused (802.1Qbb) until a deadline.

File mode builds it with `unbounded=True`: no depth limit and no rate, so no packet is ever dropped or delayed for
queue reasons (the conformance corpus was made with BMv2's depth raised to 100000 for the same reason).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p4switch.exceptions import P4SwitchError

DEFAULT_QUEUE_DEPTH = 64  # BMv2 simple_switch's default egress queue capacity


class QueueConfigError(P4SwitchError):
    """A queue admin operation named a bad priority or a negative depth or rate."""


@dataclass(slots=True, eq=False)
class _Queue:
    """One egress queue. Hashed by identity (`eq=False`): the set of non-empty queues holds the records."""

    port: int
    priority: int
    order: int  # creation order: breaks ties between equally ranked heads in `_take` (deterministic)
    capacity: int
    delay: float = 0.0  # seconds between departures; 0 = no rate limit
    last_departure: float = 0.0
    paused_until: float = 0.0
    items: deque[tuple[float, Any]] = field(default_factory=deque)
    enqueued: int = 0
    dropped: int = 0
    # unshaped and with room: `holding_enqueue` may hand its packets out at once (kept by `_configured`)
    express: bool = False


@dataclass(frozen=True)
class QueueStats:
    port: int
    priority: int
    depth: int
    capacity: int
    rate_pps: float
    enqueued: int
    dropped: int


class TrafficManager:
    """Thread-safe egress queues. `enqueue` never blocks; `dequeue` blocks until a packet may leave, the
    timeout passes, or `close()` is called."""

    def __init__(
        self,
        *,
        priority_queues: int = 1,
        default_depth: int = DEFAULT_QUEUE_DEPTH,
        unbounded: bool = False,
        clock: Callable[[], float] | None = None,
        clock_us: Callable[[], int] | None = None,
        clock_ns: Callable[[], int] | None = None,
        epoch_ns: int = 0,
        on_change: Callable[[], None] | None = None,
        refused_port: int | None = None,
    ) -> None:
        """`clock` (seconds, never going back; `time.monotonic` by default) times departures and pauses;
        `clock_us` stamps `enq_timestamp`. With `clock_ns` (a nanosecond reading of the same clock, e.g.
        `time.monotonic_ns`) an enqueue reads the clock once for both: seconds `clock_ns() / 1e9`, timestamps
        `(clock_ns() - epoch_ns) // 1000`; `clock` then defaults to `clock_ns() / 1e9`. `refused_port` has no
        queue (v1model's drop port): an enqueue for it is refused, so callers need no check of their own."""
        if priority_queues < 1 or priority_queues > 32:
            raise QueueConfigError(f"priority queues must be 1..32, not {priority_queues}")
        self.priority_queues = priority_queues
        self.unbounded = unbounded
        self._default_depth = default_depth
        self._clock_ns = clock_ns
        self._epoch_ns = epoch_ns
        if clock is None:
            clock = self._seconds_from_ns if clock_ns is not None else time.monotonic
        if clock_us is None and clock_ns is not None:
            clock_us = self._us_from_ns
        seconds = clock
        self._clock = clock
        self._clock_us = clock_us or (lambda: int(seconds() * 1_000_000))
        # the latest clock reading: a head that was due then is due now, so `poll` need not read the clock again
        self._last_now = float("-inf")
        self._queues: dict[tuple[int, int], _Queue] = {}
        self._port_defaults: dict[int, dict[int, tuple[int | None, float | None]]] = {}
        self._nonempty: set[_Queue] = set()
        # reentrant: the switch worker holds it for a whole batch (`enqueue_locked`, `poll_locked`), during which
        # an output callback may still reach a locking method (a PFC frame looped back into `pause`)
        self.lock = threading.RLock()
        self._cond = threading.Condition(self.lock)
        self._refused_port = refused_port
        self._closed = False
        self._size = 0
        self._waiters = 0  # threads blocked in `dequeue`: only they need a notify per enqueue
        self._hold_off = 0  # nonzero while a `dequeue` waits or once closed: `holding_enqueue` holds nothing
        self._on_change = on_change  # a worker waiting elsewhere must re-poll: a packet may leave earlier now

    # ------------------------------------------------------------------------------------------------- admin

    def _seconds_from_ns(self) -> float:
        assert self._clock_ns is not None
        return self._clock_ns() * 1e-9

    def _us_from_ns(self) -> int:
        assert self._clock_ns is not None
        return (self._clock_ns() - self._epoch_ns) // 1000

    def _queue(self, port: int, priority: int) -> _Queue:
        q = self._queues.get((port, priority))
        if q is None:
            q = _Queue(port, priority, len(self._queues), capacity=self._default_depth)
            self._queues[(port, priority)] = q
            self._configured(q)
        return q

    @staticmethod
    def _configured(q: _Queue) -> None:
        """After a change of a queue's depth or rate: whether its packets may skip it (`holding_enqueue`)."""
        q.express = not q.delay and q.capacity > 0

    def _priorities(self, priority: int | None) -> range:
        if priority is None:
            return range(self.priority_queues)
        if not 0 <= priority < self.priority_queues:
            raise QueueConfigError(f"priority {priority} out of range 0..{self.priority_queues - 1}")
        return range(priority, priority + 1)

    def set_queue_depth(self, port: int, depth: int, priority: int | None = None) -> None:
        """Capacity in packets of one priority queue of `port`, or of all its queues (BMv2 set_queue_depth)."""
        if depth < 0:
            raise QueueConfigError(f"queue depth must be >= 0, not {depth}")
        with self.lock:
            for p in self._priorities(priority):
                q = self._queue(port, p)
                q.capacity = depth
                self._configured(q)

    def set_queue_rate(self, port: int, pps: float, priority: int | None = None) -> None:
        """Departure rate in packets/s (0 = unlimited) of one or all priority queues of `port`."""
        if pps < 0:
            raise QueueConfigError(f"queue rate must be >= 0, not {pps}")
        with self.lock:
            for p in self._priorities(priority):
                q = self._queue(port, p)
                q.delay = 1.0 / pps if pps else 0.0
                self._configured(q)
            self._cond.notify_all()
        if self._on_change is not None:
            self._on_change()

    def set_all_queue_depths(self, depth: int) -> None:
        if depth < 0:
            raise QueueConfigError(f"queue depth must be >= 0, not {depth}")
        with self.lock:
            self._default_depth = depth
            for q in self._queues.values():
                q.capacity = depth
                self._configured(q)

    def pause(self, port: int, priority: int, seconds: float) -> None:
        """Hold queue (port, priority) for `seconds` (0 resumes at once), as a received PFC frame asks."""
        with self.lock:
            q = self._queue(port, priority)
            q.paused_until = self._clock() + seconds if seconds > 0 else 0.0
            self._cond.notify_all()
        if self._on_change is not None:
            self._on_change()

    def depth(self, port: int, priority: int | None = None) -> int:
        with self.lock:
            if priority is None:
                return sum(len(q.items) for (p, _), q in self._queues.items() if p == port)
            q = self._queues.get((port, priority))
            return len(q.items) if q else 0

    def stats(self) -> list[QueueStats]:
        with self.lock:
            return [
                QueueStats(port, prio, len(q.items), q.capacity, 1.0 / q.delay if q.delay else 0.0, q.enqueued, q.dropped)
                for (port, prio), q in sorted(self._queues.items())
            ]

    def __len__(self) -> int:
        return self._size

    # -------------------------------------------------------------------------------------------- data path

    def enqueue(self, port: int, priority: int, item: Any) -> bool:
        """Queue `item`; False when the queue is full (tail drop) or closed. Sets `item.enq_timestamp` (us) and
        `item.enq_qdepth` (packets already in the queue): items must have both attributes."""
        with self.lock:
            return self.enqueue_locked(port, priority, item)

    def enqueue_locked(self, port: int, priority: int, item: Any) -> bool:
        """`enqueue` for a caller that already holds `lock` (the switch worker holds it for a whole batch, and
        calls this once per packet: hence the flat code)."""
        q = self._queues.get((port, priority))
        if q is None:
            if port == self._refused_port:
                return False
            q = self._queue(port, priority)
        if self._closed:
            return False
        items = q.items
        depth = len(items)
        if depth >= q.capacity and not self.unbounded:
            q.dropped += 1
            return False
        clock_ns = self._clock_ns
        if clock_ns is not None:  # one reading for the departure time and the timestamp
            ns = clock_ns()
            now = self._last_now = ns * 1e-9
            item.enq_timestamp = (ns - self._epoch_ns) // 1000
        else:
            now = self._last_now = self._clock()
            item.enq_timestamp = self._clock_us()
        item.enq_qdepth = depth
        delay = q.delay
        if delay and not self.unbounded:
            departure = q.last_departure + delay
            if departure < now:
                departure = now
            q.last_departure = departure
        else:
            departure = now  # unshaped: no rate state; kept for ranking equal priorities across ports (FIFO)
        items.append((departure, item))
        q.enqueued += 1
        self._size += 1
        if not depth:
            self._nonempty.add(q)
        if self._waiters:
            self._cond.notify()
        return True

    def holding_enqueue(self, held: list[tuple[int, Any, _Queue, float]]) -> Callable[[int, int, Any], bool]:
        """An `enqueue_locked` for a caller that holds `lock` and runs egress itself: a packet that `poll` would
        hand out next and at once (every queue empty, its own queue existing, unshaped, not paused, with room, no
        blocked `dequeue`) is stamped and counted as `enqueue_locked` would (depth 0, this clock reading) and
        appended to `held` as `(port, item, queue, time)` instead of being queued; the caller pops it and runs
        its egress with dequeue depth 0, which is what the queue's enqueue and `poll` would have given. Any later
        enqueue while `held` is not empty first puts the held packet into its queue (the place and time it was
        given), so a second packet of the same pass (a clone, a replica) is ranked against it exactly as before.
        For the live switch's batch: the common unicast packet costs no queue record, set update or `poll`."""
        enqueue, get = self.enqueue_locked, self._queues.get
        clock_ns, epoch = self._clock_ns, self._epoch_ns
        if clock_ns is None or self.unbounded:
            return enqueue  # only the live switch's configuration (one nanosecond clock, depths) takes packets

        def hold(port: int, priority: int, item: Any) -> bool:
            if not held:
                if not self._size:
                    q = get((port, priority))
                    if q is not None and q.express and not self._hold_off:
                        ns = clock_ns()
                        now = ns * 1e-9
                        if q.paused_until <= now:
                            item.enq_timestamp = (ns - epoch) // 1000
                            item.enq_qdepth = 0
                            q.enqueued += 1
                            held.append((port, item, q, now))
                            return True
            else:
                self.put_held(held.pop())
            return enqueue(port, priority, item)

        return hold

    def express_plan(self) -> tuple[Callable[[tuple[int, int]], _Queue | None], Callable[[], int], int] | None:
        """What a caller needs to run `holding_enqueue`'s test inline and send the packet to egress itself instead
        of holding it (`burst.run_frames`, the live switch's per-frame loop, where a call per packet is a visible
        share of the cost): the queue lookup by `(port, priority)`, the nanosecond clock and its epoch; None where
        `holding_enqueue` holds nothing (file mode's unbounded queues, no nanosecond clock, or, read with `lock`
        held, a `dequeue` waiting or the manager closed). The test, with `lock` held and nothing held: `not
        self._size`, the queue exists and is `express`, and its `paused_until <= ns * 1e-9` for a clock reading
        `ns`; then the packet is the queue's (`enqueued += 1`) with `enq_timestamp = (ns - epoch) // 1000` and
        depth 0. Otherwise `enqueue_locked` it."""
        if self._clock_ns is None or self.unbounded or self._hold_off:
            return None
        return self._queues.get, self._clock_ns, self._epoch_ns

    def put_held(self, entry: tuple[int, Any, _Queue, float]) -> None:
        """A packet `holding_enqueue` handed out but the caller did not run: into its queue, with the departure
        time it was given (already stamped and counted). Caller holds `lock`."""
        _port, item, q, departure = entry
        items = q.items
        items.append((departure, item))
        self._size += 1
        if len(items) == 1:
            self._nonempty.add(q)

    def poll(self) -> tuple[tuple[int, int, Any, int] | None, float | None]:
        """Non-blocking dequeue for a worker that also waits on other work: `(packet or None, seconds until the
        next packet may leave or None when every queue is empty)`."""
        with self.lock:
            return self.poll_locked()

    def poll_locked(self) -> tuple[tuple[int, int, Any, int] | None, float | None]:
        """`poll` for a caller that already holds `lock`."""
        nonempty = self._nonempty
        if len(nonempty) == 1:  # the usual case under load: one busy queue, nothing to rank (per packet)
            (q,) = nonempty
            items = q.items
            departure, paused_until = items[0][0], q.paused_until
            last = self._last_now
            if departure > last or paused_until > last:  # not known to be due: read the clock
                last = self._last_now = self._clock()
            if departure <= last and paused_until <= last:
                item = items.popleft()[1]
                self._size -= 1
                if not items:
                    nonempty.discard(q)
                return (q.port, q.priority, item, len(items)), 0.0
            return self._take(last)
        now = self._last_now = self._clock()
        return self._take(now)

    def _take(self, now: float) -> tuple[tuple[int, int, Any, int] | None, float | None]:
        best: _Queue | None = None
        best_key: tuple[int, float, int] = (-1, 0.0, 0)
        wake = float("inf")
        for q in self._nonempty:
            departure = q.items[0][0]
            if q.paused_until > now:
                wake = min(wake, q.paused_until)
                continue
            if departure > now:
                wake = min(wake, departure)
                continue
            rank = (q.priority, -departure, -q.order)  # higher priority, then earlier departure, then older queue
            if best is None or rank > best_key:
                best, best_key = q, rank
        if best is None:
            return None, (None if wake == float("inf") else max(wake - now, 0.0))
        _, item = best.items.popleft()
        self._size -= 1
        if not best.items:
            self._nonempty.discard(best)
        return (best.port, best.priority, item, len(best.items)), 0.0

    def dequeue(self, timeout: float | None = None) -> tuple[int, int, Any, int] | None:
        """The next packet allowed to leave: `(port, priority, item, depth_after)`; None on timeout/close."""
        deadline = None if timeout is None else self._clock() + timeout
        with self.lock:
            while True:
                if self._closed:
                    return None
                now = self._clock()
                got, wake_in = self._take(now)
                if got is not None:
                    return got
                wake = float("inf") if wake_in is None else now + wake_in
                if deadline is not None:
                    if now >= deadline:
                        return None
                    wake = min(wake, deadline)
                self._waiters += 1
                self._hold_off += 1
                try:
                    self._cond.wait(None if wake == float("inf") else max(wake - now, 0.0))
                finally:
                    self._waiters -= 1
                    self._hold_off -= 1

    def close(self) -> None:
        """Wake every waiting dequeuer; later enqueues are refused."""
        with self.lock:
            self._closed = True
            self._hold_off += 1
            self._cond.notify_all()


class FileModeQueues:
    """The traffic manager of file mode: single-threaded, unbounded, no rates; strict priority per port (larger
    priority first), FIFO within a queue. Same `enqueue`/`dequeue` contract as `TrafficManager`, minus locks and
    clocks, because file mode's per-packet cost is the benchmark."""

    def __init__(self, *, priority_queues: int = 1, clock_us: Callable[[], int] = lambda: 0) -> None:
        self.priority_queues = priority_queues
        self._clock_us = clock_us
        self._queues: dict[tuple[int, int], deque[Any]] = {}
        self._size = 0

    def enqueue(self, port: int, priority: int, item: Any) -> bool:
        q = self._queues.get((port, priority))
        if q is None:
            q = self._queues[(port, priority)] = deque()
        item.enq_qdepth = len(q)
        item.enq_timestamp = self._clock_us()
        q.append(item)
        self._size += 1
        return True

    def dequeue(self, timeout: float | None = 0) -> tuple[int, int, Any, int] | None:
        if not self._size:
            return None
        best: tuple[int, int] | None = None
        for key, q in self._queues.items():
            if q and (best is None or key[1] > best[1]):
                best = key
        assert best is not None
        q = self._queues[best]
        item = q.popleft()
        self._size -= 1
        return best[0], best[1], item, len(q)

    def depth(self, port: int, priority: int | None = None) -> int:
        return sum(len(q) for (p, prio), q in self._queues.items() if p == port and priority in (None, prio))

    def __len__(self) -> int:
        return self._size
