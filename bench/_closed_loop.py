"""The traffic generator's closed loop for `bench/_switch_live.py`: keep `window` frames in flight toward the live
switch until `n` came back. Imported by both generator scripts there (the one-shot `forward` and the chunked
`paired` server), which run in the bench's network namespace and differ only in how they learn what came back."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any


def closed_loop(send: Callable[[list[bytes]], Any], frames: Sequence[bytes], n: int, returned: Callable[[], int], *,
                window: int, burst: int, poll: float, offset: int = 0) -> dict[str, float]:
    """Send frames `offset`, `offset + 1`, ... (round `frames`) in bursts, never more than `window` unanswered, until
    `returned()` (frames back so far in this loop) reaches `n` or nothing comes back for 2 s (a frame was lost: what
    got through is reported). Returns sent, received, seconds and CPU seconds of the loop, and `span`, the time from
    the first to the last returned frame."""
    sent = received = 0
    first = last = 0.0
    start, cpu_start = time.perf_counter(), time.process_time()
    progress = start
    while received < n:
        room = min(window - (sent - received), n - sent)
        # top the window up in bursts (a frame at a time would cost a system call and a switch wake-up each)
        if room >= burst or (room > 0 and (sent - received < window // 2 or sent + room == n)):
            send([frames[(offset + i) % len(frames)] for i in range(sent, sent + room)])
            sent += room
        got = returned()
        now = time.perf_counter()
        if got > received:
            if not received:
                first = now
            received = got
            last = progress = now
        elif now - progress > 2.0:
            break
        else:
            # look again shortly. Sleeping in select on a socket instead would put a waiter on it, and the switch's
            # transmit would pay a wake-up of this process for every frame it delivers
            time.sleep(poll)
    return {"sent": sent, "received": received, "seconds": time.perf_counter() - start,
            "cpu": time.process_time() - cpu_start, "span": last - first}
