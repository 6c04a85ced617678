"""Parser value sets end to end: members written over P4Runtime (which BMv2 refuses) steer the compiled parser."""

from __future__ import annotations

import threading

from p4.v1 import p4runtime_pb2
from p4runtime_support import entity, live_switch, table_update

PVS_P4 = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
header tag_t { bit<8> v; }
struct headers_t { ethernet_t eth; tag_t tag; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) tagged_types;
    state start { pkt.extract(h.eth); transition select(h.eth.etype) { tagged_types: tag; default: accept; } }
    state tag { pkt.extract(h.tag); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = h.tag.isValid() ? 9w2 : 9w1; }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.tag); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_value_set_members_steer_the_parser() -> None:
    ports: list[int] = []
    lock = threading.Lock()

    def collect(port: int, data: bytes) -> None:
        with lock:
            ports.append(port)

    with live_switch(PVS_P4, "pvs", collect) as (program, switch, client):
        [vs] = program.p4info.value_sets
        packet = bytes(12) + b"\x88\xb5" + bytes(50)
        switch.inject(0, packet)
        assert switch.wait_idle(10)
        members = (f'value_set_entry {{ value_set_id: {vs.preamble.id} members {{ match {{ field_id: 1 '
                   'exact { value: "\\210\\265" } } } }')
        assert client.write_updates(table_update(p4runtime_pb2.Update.MODIFY, members)) == ("OK", [])
        [read] = client.read(entity(f"value_set_entry {{ value_set_id: {vs.preamble.id} }}"))
        assert len(read.value_set_entry.members) == 1
        switch.inject(0, packet)
        assert switch.wait_idle(10)
        with lock:
            assert ports == [1, 2]  # untagged before the member exists, tagged after
