"""Adaptive offload: the threshold comes from timings; messages are routed by size."""

from __future__ import annotations

import numpy as np
import pytest

from hostagent.adaptive import AdaptiveAllReduce, calibrate, crossover


class Recorder:
    def __init__(self) -> None:
        self.sizes: list[int] = []

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        self.sizes.append(array.nbytes)
        return array * 2


def test_crossover() -> None:
    sizes = [100, 1000, 10_000, 100_000]
    assert crossover(sizes, [1, 2, 3, 4], [2, 3, 1, 1]) == 10_000
    assert crossover(sizes, [1, 2, 3, 4], [0.5, 1, 1, 1]) == 0
    assert crossover(sizes, [1, 1, 1, 1], [2, 2, 2, 2]) == 100_001
    assert crossover(sizes, [1, 2, 3, 4], [2, 1, 5, 1]) == 100_000  # only a stable win counts
    with pytest.raises(ValueError):
        crossover(sizes, [1], [1])


def test_calibrate_uses_the_timing_functions() -> None:
    assert calibrate(lambda n: n / 1000, lambda n: 5.0 + n / 10_000, [1000, 10_000, 100_000]) == 10_000


def test_adaptive_routes_by_size() -> None:
    small, large = Recorder(), Recorder()
    ad = AdaptiveAllReduce(small, large, threshold_bytes=400)
    assert np.array_equal(ad.allreduce(np.ones(10, dtype=np.float32)), np.full(10, 2.0))
    ad.allreduce(np.ones(100, dtype=np.float32))
    ad.allreduce(np.ones(99, dtype=np.int32))
    assert small.sizes == [40, 396] and large.sizes == [400]
    assert ad.counts == {"small": 2, "large": 1}
