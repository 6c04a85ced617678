"""The host ring baseline: 4 ranks on loopback, every length (fewer elements than ranks too), exact int32."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from hostagent.exceptions import ArrayTypeError, NoRouteError
from hostagent.ring import RingAllReduce

N = 4


def _ring(n: int = N) -> list[RingAllReduce]:
    ranks = [RingAllReduce(r, n, timeout=10) for r in range(n)]
    addrs = [r.listen("127.0.0.1", 0) for r in ranks]
    threads = [threading.Thread(target=r.connect, args=(addrs,)) for r in ranks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(15)
    return ranks


def _allreduce(ranks: list[RingAllReduce], data: list[np.ndarray]) -> list[np.ndarray]:
    out: list = [None] * len(ranks)

    def go(i: int) -> None:
        out[i] = ranks[i].allreduce(data[i])

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(ranks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def test_ring_allreduce_lengths_and_dtypes() -> None:
    ranks = _ring()
    try:
        rng = np.random.default_rng(0)
        for length in (1, 3, 64, 65, 100_000):
            ints = [rng.integers(-1000, 1000, size=length, dtype=np.int32) for _ in range(N)]
            out = _allreduce(ranks, ints)
            exact = np.sum(ints, axis=0, dtype=np.int32)
            assert all(o.dtype == np.int32 and np.array_equal(o, exact) for o in out)
            floats = [rng.standard_normal((length,)).astype(np.float32) for _ in range(N)]
            out = _allreduce(ranks, floats)
            assert all(np.array_equal(out[0], o) for o in out)  # every rank holds the same bits
            assert np.allclose(out[0], np.sum(floats, axis=0, dtype=np.float64), rtol=1e-5, atol=1e-5)
        shaped = [np.ones((3, 5)) * (r + 1) for r in range(N)]
        assert np.array_equal(_allreduce(ranks, shaped)[2], np.full((3, 5), 10.0))
        assert ranks[0].stats.calls == 11
        with pytest.raises(ArrayTypeError):
            ranks[0].allreduce(np.zeros(3, dtype=np.uint8))
    finally:
        for r in ranks:
            r.close()


def test_single_rank_is_identity_and_unreachable_peer_is_clear() -> None:
    solo = RingAllReduce(0, 1)
    solo.connect([("127.0.0.1", 1)])
    assert np.array_equal(solo.allreduce(np.arange(5, dtype=np.int32)), np.arange(5))
    lonely = RingAllReduce(0, 2, timeout=0.3)
    lonely.listen()
    with pytest.raises(NoRouteError, match=r"rank 0: cannot reach next rank at 127\.0\.0\.1:1"):
        lonely.connect([("127.0.0.1", 1), ("127.0.0.1", 1)])
    lonely.close()
