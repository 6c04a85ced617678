"""The file-mode benchmarks' timing loop (switch_pps's L3 and aggregation runs, aggregate_wide, p4ina.p4): frames
through one `FileModeRunner`, run to completion, wall and CPU time of the switch's work alone.

`FileModeRunner.run()` writes and drops each input batch's output (INPUT_BUFFER frames), so a switch holds at most
one batch of output frames. `timed_run_flushed` does the same (it counts and drops instead of writing): keeping
every output of a long run alive instead grows the heap by a frame per packet, and its first-touch page faults
(about 5 us of kernel time per 4 KB frame on this machine, `getrusage`) are then part of the measured CPU time
though no file-mode run pays them."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from p4switch.switch.filemode import INPUT_BUFFER

Frames = Iterable[tuple[int, bytes]]  # (ingress port, frame)


def _warm_up(runner: Any, warm: Frames) -> list[list[bytes]]:
    """Run `warm` (caches, first-use paths) and clear what it emitted; the runner's output lists."""
    for i, (port, frame) in enumerate(warm):
        runner.process(port, frame, i)
    outputs = list(runner.outputs().values())
    for out in outputs:
        out.clear()
    return outputs


def timed_run(runner: Any, warm: Frames, timed: Frames) -> tuple[float, float]:
    """Run `warm` (caches, first-use paths), clear what it emitted, then run `timed`: (wall s, CPU s) of the
    timed frames. Packet ids count from 0 in each part."""
    _warm_up(runner, warm)
    start, cpu_start = time.perf_counter(), time.process_time()
    for i, (port, frame) in enumerate(timed):
        runner.process(port, frame, i)
    return time.perf_counter() - start, time.process_time() - cpu_start


def timed_run_flushed(runner: Any, warm: Frames, timed: Frames, every: int = INPUT_BUFFER) -> tuple[float, float, int]:
    """`timed_run`, with the runner's output frames counted and dropped after every `every` input frames (as
    `run()` writes and drops them per input batch): (wall s, CPU s, frames out of the timed part)."""
    outputs = _warm_up(runner, warm)
    emitted = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    for i, (port, frame) in enumerate(timed):
        runner.process(port, frame, i)
        if i % every == every - 1:
            for out in outputs:
                emitted += len(out)
                out.clear()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return seconds, cpu, emitted + sum(len(out) for out in outputs)


def cycled(frames: list[bytes], count: int, port: int = 0) -> Frames:
    """`count` frames on `port`, going round `frames` as often as needed."""
    return ((port, frames[i % len(frames)]) for i in range(count))
