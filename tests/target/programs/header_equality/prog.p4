// Header equality (P4_16 8.17): two headers are equal when both are invalid, or both are valid with equal
// fields; != is its negation.
#include <core.p4>
#include <v1model.p4>

header v_t { bit<8> x; bit<8> y; }
header out_t { bit<8> flags; }
struct headers_t { out_t o; v_t a; v_t b; v_t c; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.a);
        transition select(h.a.x) { 0xBB: with_b; default: accept; }
    }
    state with_b { pkt.extract(h.b); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        bit<8> f = 0;
        if (h.a == h.b) { f = f | 1; }
        if (h.a != h.b) { f = f | 2; }
        if (h.b == h.c) { f = f | 4; }
        h.o.flags = f;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.a); pkt.emit(h.b); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
