// Longest-prefix match (the longest matching prefix wins regardless of order) and range match (first entry in
// source order wins among overlapping ranges).
#include <core.p4>
#include <v1model.p4>

header k_t { bit<32> addr; bit<16> port; }
header out_t { bit<8> lpm; bit<8> rng; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action set_lpm(bit<8> v) { h.o.lpm = v; }
    action set_rng(bit<8> v) { h.o.rng = v; }
    table routes {
        key = { h.k.addr : lpm; }
        actions = { set_lpm; }
        const entries = {
            0x0A000000 &&& 0xFF000000 : set_lpm(8);
            0x0A010100 &&& 0xFFFFFF00 : set_lpm(24);
            0x0A010000 &&& 0xFFFF0000 : set_lpm(16);
            0x00000000 &&& 0x00000000 : set_lpm(0);
            0x0A010101 &&& 0xFFFFFFFF : set_lpm(32);
        }
        default_action = set_lpm(0xFF);
    }
    table ranges {
        key = { h.k.port : range; }
        actions = { set_rng; }
        const entries = {
            1024 .. 2047 : set_rng(1);
            0 .. 1023 : set_rng(2);
            1500 .. 3000 : set_rng(3);
            80 .. 80 : set_rng(4);
        }
        default_action = set_rng(0xEE);
    }
    apply {
        h.o.setValid();
        routes.apply();
        ranges.apply();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
