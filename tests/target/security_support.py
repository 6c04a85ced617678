"""Shared by the security tests: a tiny v1model program that punts every frame to the CPU port with a packet_in
header, unless its `I.fwd` table (keyed on the Ethernet destination) sends it elsewhere."""

from __future__ import annotations

PUNT_ALL_P4 = r"""
#include <core.p4>
#include <v1model.p4>
#define CPU_PORT 255
@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { packet_in_t packet_in; ethernet_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action to_port(bit<9> port) { sm.egress_spec = port; }
    table fwd { key = { h.eth.dst : exact; } actions = { to_port; NoAction; } default_action = NoAction(); size = 64; }
    apply { sm.egress_spec = CPU_PORT; fwd.apply(); }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { if (sm.egress_port == CPU_PORT) { h.packet_in.setValid(); h.packet_in.ingress_port = sm.ingress_port; } }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.packet_in); pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

# Every frame becomes a digest sample (source MAC, ingress port) and is dropped.
DIGEST_ALL_P4 = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { ethernet_t eth; }
struct learn_t { bit<48> mac; bit<9> port; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { digest<learn_t>(1, { h.eth.src, sm.ingress_port }); mark_to_drop(sm); }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
