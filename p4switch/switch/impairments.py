"""Seeded link impairments per port and direction: loss, duplication, reordering and delay.

The kernel here has no netem, so the embedded switch impairs its own ports (a target option the Mininet layer
sets through the `Target` abstraction). Every decision comes from one `random.Random(seed)` per port and
direction, so a run with the same seed and the same packet sequence impairs the same packets.

Order of decisions for each frame: loss (drop it), corruption (flip one random bit), duplication (send it twice),
reordering (hold it back until the next frame of the same port and direction has gone, or until
`reorder_hold_ms` passed), delay (every frame leaves `delay_ms` (+ uniform jitter up to `jitter_ms`) after it
arrived).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from p4switch.exceptions import P4SwitchError

DIRECTIONS = ("in", "out")


class ImpairmentError(P4SwitchError):
    """An impairment was configured with an unknown direction or an out-of-range probability."""


@dataclass(frozen=True)
class ImpairmentConfig:
    loss: float = 0.0
    dup: float = 0.0
    reorder: float = 0.0
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    reorder_hold_ms: float = 50.0
    seed: int = 0
    corrupt: float = 0.0

    def validate(self) -> None:
        for name in ("loss", "dup", "reorder", "corrupt"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ImpairmentError(f"{name} must be a probability in [0, 1], not {value}")
        for name in ("delay_ms", "jitter_ms", "reorder_hold_ms"):
            if getattr(self, name) < 0:
                raise ImpairmentError(f"{name} must be >= 0")

    @property
    def active(self) -> bool:
        return bool(self.loss or self.dup or self.reorder or self.delay_ms or self.jitter_ms or self.corrupt)

    @property
    def instant(self) -> bool:
        """Decided and delivered on the spot: no delay, jitter or reordering holds a frame back."""
        return not (self.reorder or self.delay_ms or self.jitter_ms)


class Impairment:
    """Decides, for each frame, what leaves and when. Pure apart from its RNG and the frame it holds back:
    `process(frame, now)` and `expire(now)` return `(release_time, frame)` pairs in emission order."""

    def __init__(self, config: ImpairmentConfig) -> None:
        config.validate()
        self.config = config
        self._rng = random.Random(config.seed)
        self._held: tuple[float, bytes] | None = None
        self.instant = config.instant
        #: Only loss is set (no corruption, duplication, delay or reordering): one draw per frame decides it, so a
        #: burst is filtered in one pass (`pass_many`) with the same draws `process` makes.
        self.loss_only = config.instant and not (config.corrupt or config.dup)
        self.lost = 0
        self.duplicated = 0
        self.reordered = 0
        self.corrupted = 0

    def _delay(self) -> float:
        c = self.config
        jitter = self._rng.uniform(0.0, c.jitter_ms) if c.jitter_ms else 0.0
        return (c.delay_ms + jitter) / 1000.0

    def process(self, frame: bytes, now: float) -> list[tuple[float, bytes]]:
        c = self.config
        rng = self._rng
        if c.loss and rng.random() < c.loss:
            self.lost += 1
            return self.expire(now)
        if c.corrupt and frame and rng.random() < c.corrupt:
            bit = rng.randrange(len(frame) * 8)
            damaged = bytearray(frame)
            damaged[bit >> 3] ^= 0x80 >> (bit & 7)
            frame = bytes(damaged)
            self.corrupted += 1
        copies = 1
        if c.dup and rng.random() < c.dup:
            copies = 2
            self.duplicated += 1
        out: list[tuple[float, bytes]] = []
        if c.reorder and self._held is None and rng.random() < c.reorder:
            self.reordered += 1
            self._held = (now + c.reorder_hold_ms / 1000.0, frame)
            copies -= 1
        for _ in range(copies):
            out.append((now + self._delay(), frame))
        if self._held is not None and out:
            out.append((max(out[-1][0], now + self._delay()), self._held[1]))
            self._held = None
        return out

    def pass_now(self, frame: bytes) -> list[bytes]:
        """An `instant` impairment's verdict on one frame: [] (lost), [frame] (perhaps corrupted) or two copies.
        The same random draws as `process`, so a seed impairs the same frames either way."""
        if self.loss_only:
            if self._rng.random() >= self.config.loss:
                return [frame]
            self.lost += 1
            return []
        return [f for _, f in self.process(frame, 0.0)]

    def pass_many(self, frames: list[bytes]) -> list[bytes]:
        """`pass_now` for a burst, in order: what leaves, concatenated. A loss-only impairment filters the burst in
        one comprehension (one RNG draw per frame, as `process` draws), not a call and two lists per frame: on the
        emulated fabric every switch port decides every frame in both directions."""
        if not self.loss_only:
            return [f for frame in frames for f in self.pass_now(frame)]
        draw, loss = self._rng.random, self.config.loss
        kept = [frame for frame in frames if draw() >= loss]
        self.lost += len(frames) - len(kept)
        return kept

    def expire(self, now: float) -> list[tuple[float, bytes]]:
        """Release a held-back frame whose hold time is over (or every held frame when `now` is inf)."""
        if self._held is not None and self._held[0] <= now:
            frame = self._held[1]
            self._held = None
            return [(now if now != float("inf") else 0.0, frame)]
        return []

    @property
    def holding(self) -> bool:
        return self._held is not None

    @property
    def held_until(self) -> float | None:
        """When the frame held back for reordering is released at the latest (None: nothing held)."""
        return self._held[0] if self._held is not None else None
