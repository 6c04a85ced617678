"""The impaired links of a live switch: per (port, direction) `Impairment`s and the delay line that releases their
frames when due (one thread, a heap ordered by release time).

Loss, duplication and corruption without delay or reordering (`Impairment.instant`) are decided where the frame is,
in the switch's receive and transmit paths (`decide`, `decide_many`), so a lossy link costs the switch no more per
frame than a clean one, as on a real link: through the delay line every frame crossed a thread and left in a
send call of its own (measured on the emulated leaf-spine: 1.2-1.3x the step time with no frame lost).

Frames in the delay line count as in flight (`busy(+1)` when scheduled or held back, `busy(-1)` when delivered),
so `Switch.wait_idle()` also waits for them. Replacing or removing an impairment releases the frame it held back.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

from p4switch.switch.impairments import Impairment, ImpairmentConfig

Deliver = Callable[[int, str, bytes], None]  # (port, direction, frame)


class ImpairedLinks:
    def __init__(self, deliver: Deliver, busy: Callable[[int], None]) -> None:
        self.table: dict[tuple[int, str], Impairment] = {}  # read lock-free on the data path
        #: Whether any installed impairment holds frames back (delay, jitter, reordering): only then does a frame
        #: need the delay line; an `instant` one is decided in place.
        self.delayed = False
        self._deliver = deliver
        self._busy = busy
        self._heap: list[tuple[float, int, int, str, bytes | None]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._running = False

    def configure(self, port: int, direction: str, config: ImpairmentConfig) -> None:
        """Install (or, for an all-zero config, remove) the impairment of one port and direction."""
        old = self.table.pop((port, direction), None)
        if config.active:
            self.table[(port, direction)] = Impairment(config)
        self.delayed = any(not imp.instant for imp in self.table.values())
        if old is not None and old.holding:
            for _, frame in old.expire(float("inf")):
                self._busy(-1)
                self._deliver(port, direction, frame)

    def submit(self, imp: Impairment, port: int, direction: str, frame: bytes) -> None:
        """Impair one frame: lose, corrupt, duplicate, hold back or delay it, and schedule what comes out."""
        now = time.monotonic()
        with self._cond:
            was_holding = imp.holding
            released = imp.process(frame, now)
            held = imp.held_until
            if held is not None and not was_holding:
                self._busy(1)
                heapq.heappush(self._heap, (held, next(self._seq), port, direction, None))
            elif was_holding and held is None:
                self._busy(-1)
            for when, f in released:
                self._busy(1)
                heapq.heappush(self._heap, (when, next(self._seq), port, direction, f))
            self._cond.notify()

    def decide(self, imp: Impairment, frame: bytes) -> list[bytes]:
        """What of `frame` leaves an `instant` impairment (`Impairment.pass_now`), under the lock its RNG needs."""
        with self._cond:
            return imp.pass_now(frame)

    def decide_many(self, imp: Impairment, frames: list[bytes]) -> list[bytes]:
        """`decide` for a burst of one port, in order, under one hold of the lock."""
        with self._cond:
            return imp.pass_many(frames)

    def stats(self) -> dict[str, dict[str, int]]:
        return {
            f"{port}/{d}": {
                "lost": imp.lost, "duplicated": imp.duplicated, "reordered": imp.reordered, "corrupted": imp.corrupted
            }
            for (port, d), imp in sorted(self.table.items())
        }

    def start(self, name: str) -> None:
        self._running = True
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._running and (not self._heap or self._heap[0][0] > time.monotonic()):
                    self._cond.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                if not self._running:
                    return
                when, _seq, port, direction, frame = heapq.heappop(self._heap)
                if frame is None:  # a held-back (reordered) frame's hold time is over
                    imp = self.table.get((port, direction))
                    expired = imp.expire(when) if imp is not None else []
                    self._busy(-len(expired))
            if frame is None:
                for _, f in expired:
                    self._deliver(port, direction, f)
                continue
            try:
                self._deliver(port, direction, frame)
            finally:
                self._busy(-1)
