"""Issue 5, "Must show": a corrupted value is detected by the linear checksum, whether a bit flips in a RESULT on a
link or in a slot register of the switch (written through P4Runtime)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from aggnet import Fabric, InFlight, SimWorker, make_workers, running_fabric, single_switch
from scapy.layers.l2 import Ether
from test_aggregation_trees import assert_exact

from hostagent import protocol as proto

REG = "P4inaIngress.aggregation.agg_v05"


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    yield from running_fabric()


def test_bit_flip_in_a_result_is_detected_and_recovered(fabric: Fabric) -> None:
    workers = make_workers(3, chunks=3, pool=1, seed=4)
    single_switch(workers, fabric=fabric)

    def fate(n: int, item: InFlight) -> str:
        return "corrupt" if n == 4 else "deliver"  # frame 4: the RESULT to the second worker

    silences = fabric.run(fate=fate)
    assert workers[1].bad_checksums == 1
    assert silences == 1, "the worker dropped the bad RESULT and retransmitted; the switch answered again"
    workers[1].bad_checksums = 0
    assert_exact(workers)


def _send_all_but_last(fabric: Fabric, workers: list[SimWorker]) -> None:
    for w in workers[:-1]:
        fabric.send_from_worker(w.name, w.start())
    while fabric.in_flight:
        fabric.deliver(fabric.in_flight.pop(0))


def _finish(fabric: Fabric, workers: list[SimWorker]) -> list[Ether]:
    fabric.send_from_worker(workers[-1].name, workers[-1].start())
    fabric.deliver(fabric.in_flight.pop(0))
    results = [Ether(item.frame) for item in fabric.in_flight]
    assert len(results) == len(workers)
    return results


@pytest.mark.parametrize("result_fmt", [proto.FMT_INT32, proto.FMT_INT8])
def test_register_corruption_is_detected(fabric: Fabric, result_fmt: int) -> None:
    workers = make_workers(3, chunks=1, pool=1, seed=5, low=-1000, high=1000)
    single_switch(workers, fabric=fabric, result_fmt=result_fmt, p4runtime=True)
    sw = fabric.switches["s1"]
    _send_all_but_last(fabric, workers)
    cell = 0  # slot 0, version 0
    partial = sw.read_register(REG, cell)
    assert partial == (int(workers[0].chunks[0][5]) + int(workers[1].chunks[0][5])) & 0xFFFFFFFF
    sw.write_register(REG, cell, partial ^ (1 << 3))  # one bit flips in the switch's memory (a P4Runtime Write)
    for pkt in _finish(fabric, workers):
        hdr = pkt[proto.AggHeader]
        values = list(hdr.payload.values)
        if result_fmt == proto.FMT_INT32:
            # The root forwards the summed checksum untouched: the receiver sees the mismatch.
            assert proto.checksum(values) != hdr.csum
        else:
            # The root checks the sum before requantizing and says so.
            assert hdr.flags & proto.FLAG_CORRUPT
            assert proto.checksum(values) == hdr.csum


def test_clean_run_has_matching_checksums(fabric: Fabric) -> None:
    """The control for the test above: the same run without the flip verifies."""
    workers = make_workers(3, chunks=1, pool=1, seed=5, low=-1000, high=1000)
    single_switch(workers, fabric=fabric, result_fmt=proto.FMT_INT8)
    _send_all_but_last(fabric, workers)
    for pkt in _finish(fabric, workers):
        hdr = pkt[proto.AggHeader]
        assert not hdr.flags & proto.FLAG_CORRUPT
        assert proto.checksum(hdr.payload.values) == hdr.csum
        assert np.all(np.abs(np.array(hdr.payload.values)) <= 127)


def test_corrupted_stored_result_at_a_leaf_is_detected(fabric: Fabric) -> None:
    """A leaf keeps the RESULT to answer retransmissions; a flipped bit there reaches the worker as a mismatch."""
    from test_aggregation_trees import build_two_level

    workers = make_workers(4, chunks=1, pool=1, seed=12, low=-1000, high=1000)
    build_two_level(fabric, workers, pool=1)
    fabric.run()
    assert_exact(workers)
    leaf = fabric.switches["l1"]
    stored = leaf.read_register(REG, 0)
    assert stored == int(sum(w.chunks[0][5] for w in workers)) & 0xFFFFFFFF
    leaf.write_register(REG, 0, stored ^ 1)
    leaf.inject(1, workers[0].frame(0, retx=True))  # w0 lost its RESULT and asks again
    (reply,) = fabric.in_flight
    assert reply.target == "w0"
    hdr = Ether(reply.frame)[proto.AggHeader]
    assert hdr.flags & proto.FLAG_RESULT
    assert proto.checksum(hdr.payload.values) != hdr.csum
