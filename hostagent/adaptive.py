"""Adaptive offload: small messages and large messages may each be faster on a different path.

In-network aggregation sends every byte once but pays per-packet work in the agent and the switch; a host ring
pays 2(N-1) latency steps but moves bulk data through the kernel. Which wins depends on the fabric, so the
threshold is a parameter that `calibrate()` sets from measurement on the hosts at hand. Every rank must use the
same threshold: the choice depends only on the message size, so all ranks then pick the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from hostagent.validate import check_array


class AllReducer(Protocol):
    def allreduce(self, array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]: ...


@dataclass
class AdaptiveAllReduce:
    """Sends messages of fewer than `threshold_bytes` bytes through `small`, the rest through `large`."""

    small: AllReducer
    large: AllReducer
    threshold_bytes: int
    counts: dict[str, int] = field(default_factory=lambda: {"small": 0, "large": 0})

    def choose(self, nbytes: int) -> str:
        return "small" if nbytes < self.threshold_bytes else "large"

    def allreduce(self, array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
        arr = check_array(array)
        path = self.choose(arr.nbytes)
        self.counts[path] += 1
        return (self.small if path == "small" else self.large).allreduce(arr)


def crossover(sizes: Sequence[int], small_seconds: Sequence[float], large_seconds: Sequence[float]) -> int:
    """The threshold (bytes) from timings of both paths at increasing `sizes`.

    It is the first size from which the `large` path is at least as fast at that size and every larger one;
    `sizes[-1] + 1` when the large path never wins (everything goes to `small`), `0` when it always wins."""
    if not (len(sizes) == len(small_seconds) == len(large_seconds)) or not sizes:
        raise ValueError("need one timing of each path for every size")
    wins = [lg <= sm for sm, lg in zip(small_seconds, large_seconds, strict=True)]
    threshold = sizes[-1] + 1
    for i in range(len(sizes) - 1, -1, -1):
        if not wins[i]:
            break
        threshold = sizes[i]
    return 0 if threshold == sizes[0] else threshold


def calibrate(
    time_small: Callable[[int], float], time_large: Callable[[int], float], sizes: Sequence[int]
) -> int:
    """Measure both paths with the given timing functions (seconds for a message of n bytes); return the threshold.

    The timing functions run a real all-reduce on every rank (they are collective), so every rank must call
    `calibrate` with the same sizes, and should share rank 0's result to be sure all agree."""
    small = [time_small(n) for n in sizes]
    large = [time_large(n) for n in sizes]
    return crossover(sizes, small, large)
