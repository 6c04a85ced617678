"""What generated pipeline code calls for externs that need the switch: hashes, random numbers, logging,
digests and the clock. One `RuntimeBindings` per installed pipeline; the generated `build(rt)` keeps it.

The names and signatures here are a contract with the code generator (docs/architecture.md): add, never rename.
"""

from __future__ import annotations

import logging
import random as _random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from p4switch.runtime.hashes import (
    Crc,
    CrcConfig,
    UnknownHashAlgorithm,
    default_algorithms,
    field_bytes,
    field_packer,
)

_log = logging.getLogger("p4switch.pipeline")

DigestSink = Callable[[str, tuple[int, ...]], None]
LogSink = Callable[[str], None]


class RuntimeBindings:
    """Extern services for one pipeline.

    `state` is the `RuntimeState` (tables, registers, counters, meters, PRE, digests). `seed` makes `random`
    reproducible; `clock_us` (microseconds, monotonic) lets tests and file mode control time.
    """

    def __init__(
        self,
        state: Any,
        *,
        seed: int | None = None,
        clock_us: Callable[[], int] | None = None,
        log_sink: LogSink | None = None,
        digest_sink: DigestSink | None = None,
    ) -> None:
        self.state = state
        self._rng = _random.Random(seed)
        self._rng_lock = threading.Lock()
        start = time.monotonic_ns()
        self._clock_us = clock_us or (lambda: (time.monotonic_ns() - start) // 1000)
        self._log_sink = log_sink or _log.info
        self.digest_sink = digest_sink
        self.algorithms = default_algorithms()

    # --- hash ------------------------------------------------------------------------------------------------

    def hash(self, algorithm: str, fields: Iterable[tuple[int, int]]) -> int:
        """BMv2's raw hash of `(value, width)` fields (concatenated MSB first, zero-padded to whole bytes).

        Generated code passes only the fields of valid headers (BMv2 skips the others). v1model's
        `hash(out, algo, base, data, max)` is `hash_range`.
        """
        return self.hasher(algorithm)(field_bytes(fields))

    def hash_range(self, algorithm: str, fields: Iterable[tuple[int, int]], base: int, max_: int) -> int:
        """v1model `hash()` as BMv2 documents it: `base + (hash % max)` if `max >= 1`, otherwise `base`. The
        caller truncates to the output width."""
        if max_ < 1:
            return base
        return base + self.hash(algorithm, fields) % max_

    def hasher(self, algorithm: str) -> Callable[[bytes], int]:
        """The byte-level function of `algorithm`, for generated code that builds its own input bytes."""
        fn = self.algorithms.get(algorithm)
        if fn is None:
            if algorithm == "random":
                return lambda _data: self.random(0, (1 << 64) - 1)
            raise UnknownHashAlgorithm(f"unknown hash algorithm {algorithm!r}")
        return fn

    def field_packer(self, widths: tuple[int, ...]) -> Callable[..., bytes]:
        """`pack(*values) -> bytes`, the same bytes as `hash()` builds from `(value, width)` pairs, with shifts and
        masks fixed once: generated code can bind one per field list at build time (cheaper per packet)."""
        return field_packer(tuple(widths))

    def configure_crc(self, algorithm: str, config: CrcConfig) -> None:
        """Change a custom CRC's parameters (BMv2's `set_crc16_parameters`/`set_crc32_parameters`)."""
        if not algorithm.endswith("_custom") or algorithm not in self.algorithms:
            raise UnknownHashAlgorithm(f"{algorithm!r} is not a configurable CRC")
        self.algorithms[algorithm] = Crc(config)

    # --- random, log, digest, time ---------------------------------------------------------------------------

    def random(self, lo: int, hi: int) -> int:
        """v1model `random(out, lo, hi)`: uniform in [lo, hi] (lo when the range is empty)."""
        if hi <= lo:
            return lo
        with self._rng_lock:
            return self._rng.randint(lo, hi)

    def log(self, msg: str, values: Sequence[int] = ()) -> None:
        """v1model `log_msg`: each `{}` in `msg` is replaced by the next value, in decimal (as BMv2 prints)."""
        if values:
            parts = msg.split("{}")
            out = [parts[0]]
            for i, part in enumerate(parts[1:]):
                out.append(str(values[i]) if i < len(values) else "{}")
                out.append(part)
            msg = "".join(out)
        self._log_sink(msg)

    def digest(self, name: str, values: tuple[int, ...]) -> None:
        """v1model `digest<T>(receiver, data)`: `name` is the P4Info digest name, `values` the struct's fields
        in declaration order. Delivered to the switch's digest sink (the runtime state's digest queue)."""
        if self.digest_sink is not None:
            self.digest_sink(name, values)

    def now_us(self) -> int:
        """Microseconds since the switch started (BMv2's timestamp base)."""
        return self._clock_us()
