"""Packet replication end to end on the switch engine: a multicast group and a truncating clone session written
over P4Runtime (with `Replica.port` bytes and the deprecated `egress_port`) decide where copies of packets go."""

from __future__ import annotations

import threading

from p4.v1 import p4runtime_pb2
from p4runtime_support import live_switch, table_update

PRE_P4 = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { ethernet_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.eth.etype == 0x88b5) { sm.mcast_grp = 7; }
        else { sm.egress_spec = 1; clone(CloneType.I2E, 5); }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def frame(etype: int) -> bytes:
    return bytes(6) + bytes.fromhex("020000000001") + etype.to_bytes(2, "big") + bytes(range(50))


def test_multicast_groups_and_clone_sessions_drive_replication() -> None:
    out: list[tuple[int, bytes]] = []
    lock = threading.Lock()

    def collect(port: int, data: bytes) -> None:
        with lock:
            out.append((port, data))

    with live_switch(PRE_P4, "pre", collect) as (_program, switch, client):
        group = ('packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 7 '
                 'replicas { egress_port: 2 instance: 1 } replicas { port: "\\003" instance: 1 } } }')
        session = ('packet_replication_engine_entry { clone_session_entry { session_id: 5 '
                   'replicas { port: "\\004" } packet_length_bytes: 20 } }')
        insert = p4runtime_pb2.Update.INSERT
        assert client.write_updates(table_update(insert, group), table_update(insert, session)) == ("OK", [])

        switch.inject(0, frame(0x88B5))
        switch.inject(0, frame(0x0800))
        assert switch.wait_idle(10)
        with lock:
            by_port = sorted((port, len(data)) for port, data in out)
        assert by_port == [(1, 64), (2, 64), (3, 64), (4, 20)]  # multicast to 2 and 3; the clone cut to 20 bytes
