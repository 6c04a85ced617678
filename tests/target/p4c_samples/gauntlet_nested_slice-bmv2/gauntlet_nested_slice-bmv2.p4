// Re-expressed from p4c testdata/p4_16_samples/gauntlet_nested_slice-bmv2.p4: a slice of a slice as an l-value.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst_addr; bit<48> src_addr; bit<16> eth_type; }
header H { bit<8> a; bit<8> b; bit<8> c; }
struct Headers { ethernet_t eth_hdr; H h; }
struct Meta { }

parser p(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start { transition parse_hdrs; }
    state parse_hdrs { pkt.extract(hdr.eth_hdr); pkt.extract(hdr.h); transition accept; }
}

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    apply {
        bit<8> n = 8w0xFF;
        n[7:4][3:0][3:0] = 4w0;   // clears bits 7..4
        h.h.a = n;
    }
}

control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out pkt, in Headers h) { apply { pkt.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
