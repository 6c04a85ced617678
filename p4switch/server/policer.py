"""Target policers on the switch-to-controller path: a token bucket each for packet-ins and digest lists.

Why: a host can make the data plane punt frames to the CPU port as fast as it can send them. Without a cap every one
becomes a gRPC message to the primary controller, whose stream, threads and memory then go to the flood instead of
to its jobs. The policer sits where the server turns a frame into a PacketIn (BMv2 has no such cap; hardware targets
police their CPU queue the same way), so it holds whatever P4 program runs. Drops are counted, never silent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from p4switch.exceptions import P4SwitchError


class PolicerError(P4SwitchError):
    """A policer setting out of range."""


@dataclass(frozen=True)
class PolicerConfig:
    """`rate` tokens per second (one token: one packet-in or one digest list) and `burst` tokens of depth;
    `rate=None` turns the policer off (everything passes, still counted)."""

    rate: float | None = None
    burst: int = 1

    def validate(self) -> PolicerConfig:
        if self.rate is not None and (not self.rate >= 0 or self.rate == float("inf")):
            raise PolicerError(f"policer rate must be a finite number >= 0 per second, not {self.rate!r}")
        if isinstance(self.burst, bool) or not isinstance(self.burst, int) or self.burst < 1:
            raise PolicerError(f"policer burst must be an integer >= 1, not {self.burst!r}")
        return self


class TokenBucket:
    """Single-rate policer: a bucket of `burst` tokens refilled at `rate` per second; `allow()` takes one token or
    counts a drop. Thread-safe (the switch's worker and the server's timer thread both call it)."""

    def __init__(self, config: PolicerConfig | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.passed = 0
        self.dropped = 0
        self.configure(config or PolicerConfig())

    def configure(self, config: PolicerConfig) -> None:
        """New rate and burst; the bucket starts full. Counters are kept."""
        config.validate()
        with self._lock:
            self.config = config
            self._tokens = float(config.burst)
            self._last = self._clock()

    def allow(self) -> bool:
        with self._lock:
            rate = self.config.rate
            if rate is None:
                self.passed += 1
                return True
            now = self._clock()
            self._tokens = min(float(self.config.burst), self._tokens + (now - self._last) * rate)
            self._last = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                self.passed += 1
                return True
            self.dropped += 1
            return False

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"rate": self.config.rate, "burst": self.config.burst, "passed": self.passed,
                    "dropped": self.dropped}
