"""The file-mode benchmarks' timing loop (switch_pps's L3 and aggregation runs, aggregate_wide, p4ina.p4): frames
through one `FileModeRunner`, run to completion, wall and CPU time of the switch's work alone."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

Frames = Iterable[tuple[int, bytes]]  # (ingress port, frame)


def timed_run(runner: Any, warm: Frames, timed: Frames) -> tuple[float, float]:
    """Run `warm` (caches, first-use paths), clear what it emitted, then run `timed`: (wall s, CPU s) of the
    timed frames. Packet ids count from 0 in each part."""
    for i, (port, frame) in enumerate(warm):
        runner.process(port, frame, i)
    for out in runner.outputs().values():
        out.clear()
    start, cpu_start = time.perf_counter(), time.process_time()
    for i, (port, frame) in enumerate(timed):
        runner.process(port, frame, i)
    return time.perf_counter() - start, time.process_time() - cpu_start


def cycled(frames: list[bytes], count: int, port: int = 0) -> Frames:
    """`count` frames on `port`, going round `frames` as often as needed."""
    return ((port, frames[i % len(frames)]) for i in range(count))
