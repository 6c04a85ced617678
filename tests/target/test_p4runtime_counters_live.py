"""Counters end to end on the switch engine: entries installed over P4Runtime, packets through the compiled
program, then direct counters (hits only, as BMv2), indexed counters and registers read back over P4Runtime."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2
from p4runtime_support import entity, live_switch, table_update

COUNT_P4 = r"""
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
    direct_counter(CounterType.packets_and_bytes) fwd_hits;
    counter(8, CounterType.packets) per_port;
    register<bit<32>>(8) last_len;
    action to_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table fwd {
        key = { h.eth.etype : exact; }
        actions = { to_port; drop; }
        default_action = drop();
        counters = fwd_hits;
    }
    apply {
        per_port.count((bit<32>) sm.ingress_port);
        last_len.write((bit<32>) sm.ingress_port, sm.packet_length);
        fwd.apply();
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def frame(etype: int, size: int) -> bytes:
    return bytes(6) + bytes.fromhex("020000000001") + etype.to_bytes(2, "big") + bytes(size - 14)


def test_counters_and_registers_read_back_after_traffic() -> None:
    with live_switch(COUNT_P4, "count") as (program, switch, client):
        ids = {o.preamble.name: o.preamble.id for o in (*program.p4info.tables, *program.p4info.actions,
                                                         *program.p4info.counters, *program.p4info.registers)}
        hit = (f'table_entry {{ table_id: {ids["I.fwd"]} match {{ field_id: 1 exact {{ value: "\\210\\265" }} }} '
               f'action {{ action {{ action_id: {ids["I.to_port"]} params {{ param_id: 1 value: "\\002" }} }} }} }}')
        assert client.write_updates(table_update(p4runtime_pb2.Update.INSERT, hit)) == ("OK", [])
        for _ in range(3):
            switch.inject(1, frame(0x88B5, 100))  # hits
        switch.inject(3, frame(0x0800, 64))  # misses: counted per port, not by the direct counter
        assert switch.wait_idle(10)

        [entry] = client.read(entity(f"table_entry {{ table_id: {ids['I.fwd']} counter_data {{ }} }}"))
        assert (entry.table_entry.counter_data.packet_count, entry.table_entry.counter_data.byte_count) == (3, 300)
        per_port = client.read(entity(f"counter_entry {{ counter_id: {ids['I.per_port']} }}"))
        assert [c.counter_entry.data.packet_count for c in per_port] == [0, 3, 0, 1, 0, 0, 0, 0]
        [cell] = client.read(entity(f"register_entry {{ register_id: {ids['I.last_len']} index {{ index: 3 }} }}"))
        assert cell.register_entry.data.bitstring == b"\x40"  # 64: the packet_length of the last frame on port 3
