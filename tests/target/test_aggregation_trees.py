"""Issue 5, "Must show": exact sums on one switch with 4 workers, and on two levels (2 leaves + spine) with packets
delivered in random orders. p4src/p4ina.p4 runs on the embedded target; packets are crafted with the Scapy layers."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest
from aggnet import (
    Fabric,
    JobOnSwitch,
    Neighbor,
    build_tree,
    expected_sums,
    install_job,
    make_workers,
    running_fabric,
    single_switch,
)

from hostagent import protocol as proto


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    yield from running_fabric()


def assert_exact(workers: list, total_workers: int | None = None) -> None:
    sums = expected_sums(workers)
    for w in workers:
        assert w.done, f"{w.name} has {len(w.results)} of {len(w.chunks)} results"
        for k, expected in enumerate(sums):
            r = w.results[k]
            assert np.array_equal(r.values, expected), f"{w.name} chunk {k}"
            assert r.count == (total_workers or len(workers))
            assert r.fmt == proto.FMT_INT32 and not r.flags & proto.FLAG_OVERFLOW
        assert w.bad_checksums == 0


def test_one_switch_four_workers(fabric: Fabric) -> None:
    workers = make_workers(4, chunks=6, pool=4, seed=1)
    single_switch(workers, fabric=fabric)
    silences = fabric.run()
    assert silences == 0, "a loss-free run needs no retransmission"
    assert_exact(workers)
    # Each chunk: 4 DATA in, one RESULT out to each of the 4 workers; nothing else.
    assert fabric.taken == 6 * (4 + 4)
    assert not fabric.unexpected


def build_two_level(fabric: Fabric, workers: list, *, pool: int, job_id: int = 1) -> None:
    """Leaves l1, l2 (workers on ports 1, 2; uplink port 3) under spine s (l1 on port 1, l2 on port 2)."""
    leaves = [fabric.add_switch("l1"), fabric.add_switch("l2")]
    spine = fabric.add_switch("s")
    for i, leaf in enumerate(leaves):
        fabric.connect(leaf.name, 3, "s", i + 1)
        pair = workers[2 * i : 2 * i + 2]
        for j, w in enumerate(pair):
            w.child = j
            fabric.attach_worker(w, leaf.name, j + 1)
        install_job(leaf, JobOnSwitch(
            job_id=job_id, job_idx=0, slot_count=pool, mcast_grp=1,
            children={j + 1: (j, w.neighbor()) for j, w in enumerate(pair)},
            parent=(3, i, spine.neighbor())))
    install_job(spine, JobOnSwitch(
        job_id=job_id, job_idx=0, slot_count=pool, mcast_grp=1,
        children={i + 1: (i, Neighbor(leaf.mac, leaf.ip)) for i, leaf in enumerate(leaves)}))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_levels_random_order(fabric: Fabric, seed: int) -> None:
    workers = make_workers(4, chunks=8, pool=3, seed=10 + seed)
    build_two_level(fabric, workers, pool=3)
    silences = fabric.run(rng=random.Random(seed))
    assert silences == 0
    assert_exact(workers)
    # Per chunk: 4 DATA, 2 partial sums up, 2 RESULTs down to the leaves, 4 RESULTs to the workers.
    assert fabric.taken == 8 * 12
    assert not fabric.unexpected


def test_partial_sum_carries_the_leaf_index_and_count(fabric: Fabric) -> None:
    """What goes up: this switch's index at the parent, the children's count, the summed checksum, int32 values,
    addressed to the parent."""
    from scapy.layers.inet import UDP
    from scapy.layers.l2 import Ether

    workers = make_workers(4, chunks=1, pool=1, seed=3)
    build_two_level(fabric, workers, pool=1)
    fabric.send_from_worker("w2", workers[2].start())
    fabric.deliver(fabric.in_flight.pop(0))
    assert not fabric.in_flight, "the first contribution is absorbed"
    fabric.send_from_worker("w3", workers[3].start())
    fabric.deliver(fabric.in_flight.pop(0))
    (up,) = fabric.in_flight
    assert (up.target, up.port) == ("s", 2)
    pkt = Ether(up.frame)
    hdr = pkt[proto.AggHeader]
    assert hdr.child == 1 and hdr.count == 2 and not hdr.flags & proto.FLAG_RESULT
    assert hdr.csum == proto.checksum(hdr.payload.values)
    assert list(hdr.payload.values) == list(workers[2].chunks[0] + workers[3].chunks[0])
    spine = fabric.switches["s"]
    assert pkt.dst == "02:00:00:00:ff:02" and pkt[UDP].dport == proto.AGG_PORT == pkt[UDP].sport
    assert pkt[Ether].src == "02:00:00:00:ff:01" and spine.mac == 0x02_00_00_00_FF_02
    assert fabric.switches["l2"].counter("P4inaIngress.output.agg_packets", 0) == 2


@pytest.mark.parametrize("seed", [0, 1])
def test_three_levels_with_an_inner_node_and_uneven_leaves(fabric: Fabric, seed: int) -> None:
    """Root r over inner node i (leaves a: 2 workers, b: 1 worker) and leaf c (3 workers): the same program as
    leaf, inner node and root, with different child counts per switch."""
    workers = make_workers(6, chunks=6, pool=2, seed=20 + seed)
    build_tree(fabric, {"r": {"i": {"a": 2, "b": 1}, "c": 3}}, workers, pool=2)
    assert fabric.run(rng=random.Random(seed)) == 0
    assert_exact(workers)
    assert not fabric.unexpected
