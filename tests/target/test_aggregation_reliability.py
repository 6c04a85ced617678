"""Issue 5, "Must show": loss and duplication. Any single DATA or RESULT dropped or duplicated, then retransmitted:
still exact, never counted twice; 1,000 chunks through a small slot pool with random 5% drops and duplicates."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from aggnet import (
    DROP_DUPLICATE,
    DROP_STALE,
    Fabric,
    InFlight,
    expected_sums,
    make_workers,
    running_fabric,
    single_switch,
)
from test_aggregation_trees import assert_exact, build_two_level

from hostagent import protocol as proto


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    yield from running_fabric()


def only(n_target: int, what: str) -> Callable[[int, InFlight], str]:
    def fate(n: int, item: InFlight) -> str:
        return what if n == n_target else "deliver"

    return fate


# One switch, 3 workers, one chunk: 3 DATA + 3 RESULTs = frames 0..5 in FIFO order.
@pytest.mark.parametrize("what", ["drop", "dup"])
@pytest.mark.parametrize("n", range(6))
def test_one_switch_single_loss_or_duplicate(fabric: Fabric, n: int, what: str) -> None:
    workers = make_workers(3, chunks=2, pool=1, seed=n)
    single_switch(workers, fabric=fabric)
    silences = fabric.run(fate=only(n, what))
    assert_exact(workers)
    assert silences == (1 if what == "drop" else 0)
    if what == "dup" and n < 2:  # a duplicate of the last DATA finds the slot complete: answered, not dropped
        assert fabric.switches["s1"].drops(0, DROP_DUPLICATE) == 1


# Two levels, one chunk: 4 DATA, 2 partial sums, 2 RESULTs to the leaves, 4 RESULTs to workers = 12 frames.
@pytest.mark.parametrize("what", ["drop", "dup"])
@pytest.mark.parametrize("n", range(12))
def test_two_levels_single_loss_or_duplicate(fabric: Fabric, n: int, what: str) -> None:
    workers = make_workers(4, chunks=2, pool=1, seed=100 + n)
    build_two_level(fabric, workers, pool=1)
    fabric.run(fate=only(n, what))
    assert_exact(workers)


def test_thousand_chunks_small_pool_random_loss_and_duplication(fabric: Fabric) -> None:
    workers = make_workers(3, chunks=1000, pool=4, seed=7)
    single_switch(workers, fabric=fabric)
    rng = random.Random(5)
    fates: dict[str, int] = {"drop": 0, "dup": 0, "deliver": 0}

    def fate(n: int, item: InFlight) -> str:
        r = rng.random()
        what = "drop" if r < 0.05 else "dup" if r < 0.10 else "deliver"
        fates[what] += 1
        return what

    silences = fabric.run(rng=random.Random(6), fate=fate, max_silences=5000)
    assert_exact(workers)
    assert fates["drop"] > 100 and fates["dup"] > 100 and silences > 0
    sums = expected_sums(workers)
    assert all(np.array_equal(w.results[999].values, sums[999]) for w in workers)


def test_next_step_reuses_slots_with_seq_from_zero(fabric: Fabric) -> None:
    workers = make_workers(3, chunks=6, pool=2, seed=8)
    single_switch(workers, fabric=fabric)
    fabric.run()
    assert_exact(workers)
    fresh = make_workers(3, chunks=4, pool=2, seed=9)
    for w, f in zip(workers, fresh, strict=True):
        w.next_step(f.chunks)
    assert fabric.run() == 0
    assert_exact(workers)


def test_late_duplicate_is_stale_and_harmless(fabric: Fabric) -> None:
    workers = make_workers(2, chunks=5, pool=1, seed=10)
    single_switch(workers, fabric=fabric)
    late = [workers[0].frame(0), workers[1].frame(2)]  # rounds 0 and 2 of version 0 of slot 0
    fabric.run(max_silences=0)
    sw = fabric.switches["s1"]
    sw.inject(1, late[0])
    sw.inject(2, late[1])
    assert not fabric.in_flight
    assert sw.drops(0, DROP_STALE) == 2
    fresh = make_workers(2, chunks=1, pool=1, seed=11)
    for w, f in zip(workers, fresh, strict=True):
        w.next_step(f.chunks)
    fabric.run(max_silences=0)
    assert_exact(workers)


def test_two_levels_random_loss_duplication_and_order(fabric: Fabric) -> None:
    """The same on two levels, where lost partial sums and lost RESULTs between switches must be recovered by the
    leaves resending upwards and the spine answering with its stored RESULT."""
    workers = make_workers(4, chunks=300, pool=3, seed=21)
    build_two_level(fabric, workers, pool=3)
    rng = random.Random(22)
    resent_up = 0

    def fate(n: int, item: InFlight) -> str:
        nonlocal resent_up
        if item.target == "s" and item.frame[proto.AGG_OFFSET + proto.OFF_FMT_FLAGS] & proto.FLAG_RETX:
            resent_up += 1
        r = rng.random()
        return "drop" if r < 0.05 else "dup" if r < 0.10 else "deliver"

    silences = fabric.run(rng=random.Random(23), fate=fate, max_silences=5000)
    assert_exact(workers)
    assert silences > 0 and resent_up > 0
