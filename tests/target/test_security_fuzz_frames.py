"""100,000 hostile frames into the switch running p4src/p4ina.p4 in-process (`Switch.process`): every size from 0
bytes to a 9216-byte jumbo, every truncation of valid aggregation/IPv4/PFC/ARP frames, and seeded random mutations
of them (bit flips, byte stores, header fields set to edge values, splices). The switch must stay alive (every
frame runs to completion, no packet ever fails in the pipeline: `errors == 0`), its control-plane state (table
entries, default actions, multicast groups, clone sessions) must be exactly what it was, and a valid aggregation
frame must still be processed afterwards."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from aggnet import AggSwitch, JobOnSwitch, install_job, make_workers
from p4.v1 import p4runtime_pb2
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from hostagent import protocol as proto

TOTAL = 100_000
JUMBO = 9216
SEED = 20261129


def _seeds(workers: list[Any]) -> list[bytes]:
    from p4switch.switch.pfc import build_pfc

    frames = [w.frame(k) for w in workers for k in range(4)]
    frames.append(bytes(Ether(dst="02:00:00:00:ff:00", src="02:00:00:00:00:01") / IP(src="10.0.0.1", dst="10.0.0.9")
                        / UDP(sport=1234, dport=5678) / (b"x" * 32)))
    frames.append(bytes(Ether(dst="02:00:00:00:ff:00") / IP(dst="10.255.0.0", tos=proto.TOS_GRADIENT, ihl=15)
                        / UDP(dport=proto.AGG_PORT)))
    frames.append(build_pfc(b"\x02\x00\x00\x00\x00\x01", {3: 0xFFFF, 5: 0}))
    frames.append(bytes(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.255.0.0")))
    return frames


def _mutate(rng: random.Random, frame: bytes, pool: list[bytes]) -> bytes:
    buf = bytearray(frame)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(7)
        if op == 0 and buf:  # bit flip
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:  # byte store with an edge value
            buf[rng.randrange(len(buf))] = rng.choice((0, 1, 0x7F, 0x80, 0xFE, 0xFF, rng.randrange(256)))
        elif op == 2 and len(buf) >= 2:  # 16-bit field at a header offset set to an edge value (ethertype, lengths,
            i = rng.choice((12, 14, 16, 18, 20, 22, 24, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56))  # ports..)
            if i + 2 <= len(buf):
                buf[i:i + 2] = struct.pack(">H", rng.choice((0, 1, 0x0800, 0x8808, 0x0806, 0xFFFF, 20, 5,
                                                            proto.AGG_PORT, rng.randrange(65536))))
        elif op == 3:  # truncate
            del buf[rng.randrange(len(buf) + 1):]
        elif op == 4:  # splice another seed's tail
            other = rng.choice(pool)
            cut = rng.randrange(len(other) + 1)
            buf = buf[: rng.randrange(len(buf) + 1)] + bytearray(other[cut:])
        elif op == 5:  # grow towards a jumbo
            buf += rng.randbytes(rng.randrange(0, min(4096, JUMBO - len(buf)) + 1))
        elif op == 6 and len(buf) > 14:  # the IPv4 version/IHL byte
            buf[14] = rng.choice((0x45, 0x4F, 0x40, 0x46, 0x65, rng.randrange(256)))
    return bytes(buf[:JUMBO])


def frames(seeds: list[bytes]) -> Iterator[bytes]:
    """Exactly TOTAL frames, deterministic for SEED."""
    rng = random.Random(SEED)
    count = 0
    for size in range(JUMBO + 1):  # every size, random content
        yield rng.randbytes(size)
        count += 1
    for seed in seeds:  # every truncation of every seed: truncated headers at each byte
        for cut in range(len(seed)):
            yield seed[:cut]
            count += 1
    while count < TOTAL:  # mutations
        yield _mutate(rng, rng.choice(seeds), seeds)
        count += 1


def _control_state(sw: AggSwitch) -> list[bytes]:
    """Every table entry (with default entries), multicast group and clone session, as sorted wire bytes."""
    from p4switch.runtime.entries import EntityCodec

    codec = EntityCodec(sw.switch.state)
    out: list[bytes] = []
    wildcards = [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()),
                 p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(is_default_action=True))]
    pre = p4runtime_pb2.Entity()
    pre.packet_replication_engine_entry.multicast_group_entry.SetInParent()
    wildcards.append(pre)
    clone = p4runtime_pb2.Entity()
    clone.packet_replication_engine_entry.clone_session_entry.SetInParent()
    wildcards.append(clone)
    for wildcard in wildcards:
        for entity in codec.read(wildcard):
            out.append(entity.SerializeToString(deterministic=True))
    return sorted(out)


@pytest.fixture(scope="module")
def switch() -> Iterator[tuple[AggSwitch, list[bytes]]]:
    outputs = [0]

    def count(_name: str, _port: int, _frame: bytes) -> None:
        outputs[0] += 1

    sw = AggSwitch("s1", 0, count)
    workers = make_workers(2, 4, pool=4)
    install_job(sw, JobOnSwitch(job_id=1, job_idx=0, slot_count=4, mcast_grp=1,
                                children={1 + i: (w.child, w.neighbor()) for i, w in enumerate(workers)}))
    sw.add_group(9, [1, 2, 3])
    try:
        yield sw, _seeds(workers)
    finally:
        sw.stop()


def test_100k_hostile_frames_leave_the_switch_alive_and_its_tables_unchanged(
        switch: tuple[AggSwitch, list[bytes]]) -> None:
    sw, seeds = switch
    before = _control_state(sw)
    assert len(before) > 5, "the job's entries are installed"
    rng = random.Random(SEED + 1)
    stuck = 0
    n = 0
    for frame in frames(seeds):
        # ports 1..2 are the job's children, 3..7 are not; a PFC pause may hold a queue briefly (not a failure)
        if not sw.switch.process(rng.randrange(1, 8), frame, timeout=5.0):
            stuck += 1
        n += 1
    assert n == TOTAL
    stats = sw.switch.stats()
    assert stats["errors"] == 0, "no frame made the pipeline fail"
    assert stats["received"] >= TOTAL - stats["dropped_input_full"]
    assert stuck == 0 or sw.switch.wait_idle(30.0), "every frame ran to completion"
    assert _control_state(sw) == before, "the control-plane state is unchanged"
    reached = sum(sw.drops(0, reason) for reason in range(8))
    assert reached > 1000, "mutated aggregation frames reached the program's admission and slot checks"
    # still working: a valid DATA frame from an admitted child is processed (forwarded or counted as a drop)
    received = stats["received"]
    assert sw.switch.process(1, seeds[0], timeout=10.0)
    assert sw.switch.stats()["received"] == received + 1
