"""Multicast and clone replicas are independent packets (BMv2's PRE copies the packet and its metadata per replica):
the engine makes one deep copy fewer per replication by handing the packet itself to the last replica, so a
replica's egress must still never see another replica's changes, whichever replica runs egress first."""

from __future__ import annotations

import struct

import pytest

from p4switch.compiler import compile_text
from p4switch.runtime.state import CloneSession, MulticastGroup, Replica
from p4switch.switch.filemode import FileModeRunner, TickClock
from p4switch.switch.pipeline import build_pipeline

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header d_t { bit<8> mode; bit<16> a; bit<16> rid; bit<16> port; bit<8> kind; }
struct h_t { d_t d; }
struct m_t { }
parser P(packet_in pkt, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.d); transition accept; }
}
control VC(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        h.d.a = h.d.a + 5;
        if (h.d.mode == 1) {
            sm.mcast_grp = 1;
        } else {
            sm.egress_spec = 9;
            clone(CloneType.I2E, 7);
        }
    }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        // every replica adds to the same field: a shared header object would accumulate
        h.d.a = h.d.a + 1;
        h.d.rid = sm.egress_rid;
        h.d.port = (bit<16>) sm.egress_port;
        h.d.kind = (bit<8>) sm.instance_type;
    }
}
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pkt, in h_t h) { apply { pkt.emit(h.d); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

PORTS = (2, 3, 4)


def frame(mode: int, a: int) -> bytes:
    return struct.pack(">BHHHB", mode, a, 0, 0, 0) + b"payload"


@pytest.fixture(scope="module")
def program() -> tuple[object, bytes]:
    compiled = compile_text(PROGRAM, "replication_copies")
    return compiled.p4info, compiled.device_config_bytes()


def runner(program: tuple[object, bytes]) -> FileModeRunner:
    clock = TickClock()
    pipeline = build_pipeline(*program, seed=1, clock_us=clock)  # type: ignore[arg-type]
    pre = pipeline.state.pre
    pre.mcast_groups[1] = MulticastGroup(1, [Replica(rid=10 + i, port=p) for i, p in enumerate(PORTS)])
    pre.clone_sessions[7] = CloneSession(7, [Replica(rid=20 + i, port=p) for i, p in enumerate(PORTS)])
    return FileModeRunner(pipeline, {p: f"p{p}" for p in (1, *PORTS, 9)}, clock=clock)


def test_every_multicast_replica_gets_its_own_copy(program: tuple[object, bytes]) -> None:
    r = runner(program)
    for i in range(3):  # several packets: copies of one packet never leak into the next either
        r.process(1, frame(1, 100 * i), i)
    out = r.outputs()
    for port_index, port in enumerate(PORTS):
        assert out[port] == [struct.pack(">BHHHB", 1, 100 * i + 5 + 1, 10 + port_index, port, 5) + b"payload"
                             for i in range(3)]
    assert out[9] == [] and out[1] == []


def test_every_clone_replica_gets_its_own_copy(program: tuple[object, bytes]) -> None:
    r = runner(program)
    r.process(1, frame(0, 40), 0)
    out = r.outputs()
    # the original leaves on port 9 (normal instance); each I2E clone is the packet as it entered ingress (a = 40)
    # with its own egress pass
    assert out[9] == [struct.pack(">BHHHB", 0, 40 + 5 + 1, 0, 9, 0) + b"payload"]
    for port_index, port in enumerate(PORTS):
        assert out[port] == [struct.pack(">BHHHB", 0, 40 + 1, 20 + port_index, port, 1) + b"payload"]
