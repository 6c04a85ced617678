"""Issue 5, "Must show": two jobs in parallel on one switch do not interfere; a spoofed packet for job B from a
port of job A, a slot outside the job's pool, an unknown job and a RESULT from a non-parent port are dropped and
counted per job and reason in counters read over P4Runtime."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from aggnet import (
    DROP_NOT_ADMITTED,
    DROP_SLOT_RANGE,
    DROP_UNKNOWN_JOB,
    MAX_JOBS,
    Fabric,
    SimWorker,
    make_workers,
    running_fabric,
    single_switch,
)
from test_aggregation_trees import assert_exact

from hostagent import protocol as proto


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    yield from running_fabric()


def two_jobs(fabric: Fabric) -> tuple[list[SimWorker], list[SimWorker]]:
    """Job 10 (index 0, slots 0..3) on ports 1-2; job 20 (index 1, slots 4..7) on ports 3-4, same child indices.
    Entries are written, and counters read, over P4Runtime (gRPC on loopback)."""
    a = make_workers(2, chunks=10, pool=4, job_id=10, seed=1, prefix="a")
    b = make_workers(2, chunks=10, pool=4, job_id=20, seed=2, prefix="b")
    single_switch(a, fabric=fabric, job_id=10, job_idx=0, slot_base=0, first_port=1, p4runtime=True)
    single_switch(b, fabric=fabric, job_id=20, job_idx=1, slot_base=4, first_port=3)
    return a, b


def test_two_jobs_in_parallel_do_not_interfere(fabric: Fabric) -> None:
    a, b = two_jobs(fabric)
    assert fabric.run(rng=random.Random(3)) == 0
    assert_exact(a)
    assert_exact(b)
    sw = fabric.switches["s1"]
    assert sw.counter("P4inaIngress.output.agg_packets", 0) == 20
    assert sw.counter("P4inaIngress.output.agg_packets", 1) == 20


def test_spoofed_and_out_of_range_packets_are_dropped_and_counted(fabric: Fabric) -> None:
    a, b = two_jobs(fabric)
    sw = fabric.switches["s1"]
    # A host on job A's port 1 pretends to be job B's child 0, with values that would poison B's sum.
    spoof = SimWorker(name="x", rank=0, child=0, job_id=20, pool=4, chunks=[b[0].chunks[0] * 0 + 12345])
    spoof.index = 99
    sw.inject(1, spoof.frame(0))
    # Job A's own worker, but a slot beyond A's pool (4 slots): slot 4 would be job B's first slot.
    rogue = SimWorker(name="y", rank=0, child=0, job_id=10, pool=8, chunks=[a[0].chunks[0]] * 5)
    rogue.index = 98
    sw.inject(1, rogue.frame(4))
    # An unknown job, and a RESULT sent to the root (only a parent may send RESULTs).
    stranger = SimWorker(name="z", rank=0, child=0, job_id=777, pool=4, chunks=[a[0].chunks[0]])
    stranger.index = 97
    sw.inject(2, stranger.frame(0))
    sw.inject(2, bytes(_as_result(a[1].frame(0))))
    assert not fabric.in_flight, "nothing may come out"

    assert sw.drops(1, DROP_NOT_ADMITTED) == 1
    assert sw.drops(0, DROP_SLOT_RANGE) == 1
    assert sw.drops(MAX_JOBS, DROP_UNKNOWN_JOB) == 1
    assert sw.drops(0, DROP_NOT_ADMITTED) == 1
    assert sw.drops(1, DROP_SLOT_RANGE) == 0
    # Neither job's slots were touched: both still produce exact sums.
    fabric.run()
    assert_exact(a)
    assert_exact(b)


def test_wrong_child_index_on_an_admitted_port_is_refused(fabric: Fabric) -> None:
    a, _ = two_jobs(fabric)
    sw = fabric.switches["s1"]
    impostor = SimWorker(name="i", rank=1, child=1, job_id=10, pool=4, chunks=[a[0].chunks[0]])
    impostor.index = 96
    sw.inject(1, impostor.frame(0))  # port 1 is child 0's port
    assert sw.drops(0, DROP_NOT_ADMITTED) == 1
    assert not fabric.in_flight


def _as_result(frame: bytes) -> bytes:
    data = bytearray(frame)
    data[proto.AGG_OFFSET + proto.OFF_FMT_FLAGS] |= proto.FLAG_RESULT
    return bytes(data)


def test_pool_configured_past_the_registers_is_refused(fabric: Fabric) -> None:
    """A controller error (slot_base beyond AGG_SLOTS = 512) cannot make a packet wrap into another job's slots."""
    w = make_workers(1, chunks=1, pool=4, job_id=30, seed=3)
    single_switch(w, fabric=fabric, job_id=30, job_idx=2, slot_base=510)
    sw = fabric.switches["s1"]
    sw.inject(1, w[0].frame(0))  # slot 510 + 0: inside
    assert len(fabric.in_flight) == 1
    fabric.in_flight.clear()
    late = SimWorker(name="p", rank=0, child=0, job_id=30, pool=4, chunks=[w[0].chunks[0]] * 3)
    late.index = w[0].index
    sw.inject(1, late.frame(2))  # slot 510 + 2 = 512: past the arrays
    assert not fabric.in_flight
    assert sw.drops(2, DROP_SLOT_RANGE) == 1
