// Re-expressed from p4c testdata/p4_16_samples/gauntlet_side_effect_order_1-bmv2.p4: out parameters aliased to
// one argument, copied back left to right (the value itself is unspecified, hence the stf wildcards).
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst_addr; bit<48> src_addr; bit<16> eth_type; }
header H { bit<16> a; }
struct Headers { ethernet_t eth_hdr; H h; }
struct Meta { }

parser p(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start { transition parse_hdrs; }
    state parse_hdrs { pkt.extract(hdr.eth_hdr); pkt.extract(hdr.h); transition accept; }
}

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    action do_action_1(out bit<16> val_1, out bit<16> val_2) { val_1 = val_2; }
    action do_action_2(out bit<16> val) { do_action_1(val, val); }
    apply { do_action_2(h.h.a); }
}

control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out pkt, in Headers h) { apply { pkt.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
