"""Values per packet as a build parameter: p4src/p4ina.p4 compiled with -D AGG_VALUES=N aggregates real packets of N
values on the embedded switch (expected sums from numpy on the inputs), drops and counts a packet of another N, and
tells the controller its N through P4Info (docs/protocol.md, docs/p4-program.md "Values per packet")."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from aggnet import (
    DROP_BAD_FORMAT,
    ING,
    Fabric,
    compiled_program,
    expected_sums,
    ip_str,
    mac_str,
    make_workers,
    single_switch,
)
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hostagent import protocol as proto

# Every N is a compile of its own (cached per session): tens of seconds of CPU each, minutes on a busy host.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    fab = Fabric()
    try:
        yield fab
    finally:
        fab.stop()


def _round_half_up(total: np.ndarray, bits: int) -> tuple[np.ndarray, int]:
    """The root's requantization as docs/protocol.md states it, computed here with numpy: shift s from the most
    significant bit of the OR of the magnitudes, v = (sum + 2**(s-1)) >> s clamped to the format's maximum."""
    mags = np.where(total < 0, ~total, total)
    orred = int(np.bitwise_or.reduce(mags.astype(np.int64)))
    msb = orred.bit_length() - 1 if orred else -1
    s = max(0, msb + 2 - bits) if orred else 0
    half = (1 << s) >> 1
    v = (total + half) >> s
    return np.minimum(v, (1 << (bits - 1)) - 1), s


# 32 (the narrowest build), 256, 512 and 2048 (the widest: 8 KB of int32 in a jumbo frame, the embedded fabric's
# packets); `p4ina bench` measures the switch's cost across widths (switch_pps, compile_time).
@pytest.mark.parametrize("n", [32, 256, 512, 2048])
def test_sums_of_n_values_are_exact(fabric: Fabric, n: int) -> None:
    """Three workers, four chunks of N int32 values over a pool of two slots (each slot used twice, both versions)."""
    fabric.add_switch("s1", values=n)
    workers = make_workers(3, chunks=4, pool=2, lanes=n, seed=n)
    single_switch(workers, fabric=fabric)
    fabric.run()
    expected = expected_sums(workers)
    for w in workers:
        assert w.bad_checksums == 0 and w.corrupt_flags == 0
        for k, total in enumerate(expected):
            r = w.results[k]
            assert r.values.shape == (n,)
            assert np.array_equal(r.values, total), f"{w.name} chunk {k}"
            assert r.count == len(workers) and r.fmt == proto.FMT_INT32 and r.flags == proto.FLAG_RESULT


@pytest.mark.parametrize("n, fmt, bits", [(256, proto.FMT_INT8, 8), (128, proto.FMT_INT16, 16)])
def test_root_requantizes_n_values(fabric: Fabric, n: int, fmt: int, bits: int) -> None:
    """The magnitude OR and the checksums run over blocks of 64: at N > 64 the shift, the rounded values and the
    narrow RESULT's checksum must still cover every element."""
    fabric.add_switch("s1", values=n)
    workers = make_workers(2, chunks=2, pool=2, lanes=n, seed=7, low=-(2**18), high=2**18)
    workers[0].chunks[1][n - 1] = 2**24  # the largest magnitude in the last block: it alone sets the shift
    single_switch(workers, fabric=fabric, result_fmt=fmt)
    fabric.run()
    for k, total in enumerate(expected_sums(workers)):
        want, s = _round_half_up(total, bits)
        for w in workers:
            r = w.results[k]
            assert w.bad_checksums == 0, "the narrow RESULT's checksum must be that of its values"
            assert r.fmt == fmt and r.exp == s
            assert np.array_equal(r.values, want), f"{w.name} chunk {k}"


def _data_frame(lanes: int, *, child: int, port_index: int) -> bytes:
    values = np.arange(lanes, dtype=np.int64) - lanes // 2
    layers = proto.agg_layers(values, job_id=1, slot=0, ver=0, seq=0, child=child, lanes=lanes)
    return bytes(Ether(src=mac_str(0x020000000000 + port_index), dst="02:00:00:00:ff:00")
                 / IP(src=ip_str(0x0A000000 + port_index), dst="10.255.0.0", tos=proto.TOS_GRADIENT)
                 / UDP(sport=40000 + port_index, dport=proto.AGG_PORT, chksum=0) / layers)


def test_packet_of_another_n_is_dropped_and_counted(fabric: Fabric) -> None:
    """A switch built for 256 values drops DATA of 64 (shorter: the extract fails) and of 1024 (longer: the UDP
    length says so) as BAD_FORMAT, and adds nothing to the slot: the right-sized packets still sum exactly."""
    sw = fabric.add_switch("s1", values=256)
    workers = make_workers(2, chunks=1, pool=1, lanes=256, seed=3)
    single_switch(workers, fabric=fabric)
    out: list[bytes] = []
    sw.switch.add_output_callback(lambda _port, frame: out.append(frame))
    sw.inject(1, _data_frame(64, child=0, port_index=1))
    sw.inject(2, _data_frame(1024, child=1, port_index=2))
    assert out == []
    assert sw.drops(0, DROP_BAD_FORMAT) == 2
    assert sw.read_register(f"{ING}.aggregation.agg_bitmap", 0) == 0, "a wrong-sized packet touched the slot"
    fabric.in_flight.clear()
    fabric.run()
    for w in workers:
        assert np.array_equal(w.results[0].values, expected_sums(workers)[0])


@pytest.mark.parametrize("n", [32, 256])
def test_controller_reads_n_from_p4info(n: int) -> None:
    from controller.p4info import P4InfoHelper
    from controller.program import BITMAP_REGISTER, pipeline_values

    p4info, _ = compiled_program(n)
    helper = P4InfoHelper(p4info)
    assert f"@p4ina_values({n})" in list(helper.registers.get(BITMAP_REGISTER).preamble.annotations)
    assert pipeline_values(helper) == n
    names = sorted(r.preamble.name.rsplit(".", 1)[1] for r in p4info.registers if ".agg_v" in r.preamble.name)
    digits = max(2, len(f"{n - 1:o}"))
    assert names == sorted(f"agg_v{i:0{digits}o}" for i in range(n))


def test_host_agents_allreduce_with_256_values_per_packet() -> None:
    """Real `hostagent.Worker`s packing 256 values per packet through a switch built for 256: int32 exact, and a
    tensor that is not a multiple of 256 (the last packet zero-padded)."""
    import threading

    from aggnet import AggSwitch, JobOnSwitch, Neighbor, install_job

    from hostagent.codec import Endpoints
    from hostagent.transport import SwitchPorts
    from hostagent.worker import Worker

    n, ranks, job = 256, 3, 9
    sw = AggSwitch("s1", 0, lambda _name, _port, _frame: None, values=n)
    try:
        ports = SwitchPorts(sw.switch)
        children: dict[int, tuple[int, Neighbor]] = {}
        workers = []
        for r in range(ranks):
            who = Neighbor(mac=0x02_00_00_00_00_10 + r, ip=0x0A_00_00_10 + r, udp_port=41000 + r)
            children[r + 1] = (r, who)
            ep = Endpoints(src_mac=mac_str(who.mac), dst_mac=mac_str(sw.mac), src_ip=ip_str(who.ip),
                           dst_ip=ip_str(sw.ip), udp_port=who.udp_port)
            workers.append(Worker(job, r, n_workers=ranks, child=r, transport=ports.attach(r + 1, who.udp_port),
                                  endpoints=ep, pool_size=8, timeout=0.2, max_retries=40, values_per_packet=n,
                                  job_values=n))
        install_job(sw, JobOnSwitch(job_id=job, job_idx=0, slot_count=8, children=children, mcast_grp=1))
        rng = np.random.default_rng(5)
        data = [rng.integers(-(2**20), 2**20, 5000).astype(np.int32) for _ in range(ranks)]
        out: list[np.ndarray | None] = [None] * ranks

        def go(i: int) -> None:
            out[i] = workers[i].allreduce(data[i])

        threads = [threading.Thread(target=go, args=(i,)) for i in range(ranks)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        expected = np.sum([d.astype(np.int64) for d in data], axis=0)
        for w, got in zip(workers, out, strict=True):
            assert got is not None and np.array_equal(got.astype(np.int64), expected)
            assert w.stats.chunks == -(-5000 // n) and w.stats.checksum_failures == 0
    finally:
        sw.stop()
