// Re-expressed from p4c testdata/p4_16_samples/gauntlet_copy_out-bmv2.p4: an action with an inout parameter
// called directly twice on a control local.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst_addr; bit<48> src_addr; bit<16> eth_type; }
header H { bit<8> a; bit<8> b; }
struct Headers { ethernet_t eth_hdr; H h; }
struct Meta { }

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    bit<8> c = 8w12;
    action do_thing(inout bit<8> inout_c) { h.h.a = inout_c; }
    apply { do_thing(c); do_thing(c); }
}

parser p(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start { transition parse_hdrs; }
    state parse_hdrs { pkt.extract(hdr.eth_hdr); pkt.extract(hdr.h); transition accept; }
}

control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out pkt, in Headers h) { apply { pkt.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
