"""Meters end to end on the switch engine: a byte meter configured over P4Runtime colours packets GREEN, YELLOW,
RED as BMv2's two-rate three-color meter does (peak bucket first), seen in the packets the program marks."""

from __future__ import annotations

import threading

from p4.v1 import p4runtime_pb2
from p4runtime_support import entity, live_switch, table_update

METER_P4 = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { ethernet_t eth; }
struct meta_t { bit<2> color; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    meter(4, MeterType.bytes) police;
    apply {
        police.execute_meter((bit<32>) 2, m.color);
        h.eth.dst[7:0] = (bit<8>) m.color;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_a_byte_meter_colours_packets_like_bmv2() -> None:
    colors: list[int] = []
    lock = threading.Lock()

    def collect(port: int, data: bytes) -> None:
        with lock:
            colors.append(data[5])

    with live_switch(METER_P4, "meter", collect) as (program, switch, client):
        [meter] = program.p4info.meters
        # 1 byte/s refills: nothing measurable during the test; bursts of one and two 64-byte packets
        config = (f"meter_entry {{ meter_id: {meter.preamble.id} index {{ index: 2 }} "
                  "config { cir: 1 cburst: 64 pir: 1 pburst: 128 } }")
        assert client.write_updates(table_update(p4runtime_pb2.Update.MODIFY, config)) == ("OK", [])
        [read] = client.read(entity(f"meter_entry {{ meter_id: {meter.preamble.id} index {{ index: 2 }} }}"))
        assert (read.meter_entry.config.cburst, read.meter_entry.config.pburst) == (64, 128)
        for _ in range(3):
            switch.inject(0, bytes(12) + b"\x88\xb5" + bytes(50))  # 64 bytes
            assert switch.wait_idle(10)
        with lock:
            assert colors == [0, 1, 2]  # GREEN, YELLOW, RED
