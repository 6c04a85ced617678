// select: tuple keys with don't-care, masks (&&&), ranges (..), default, first match wins; a select on a slice;
// chains of parser sub-states meeting in a common state.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<16> a; bit<8> b; }
header out_t { bit<8> path; bit<8> sub; }
struct headers_t { out_t o; k_t k; }
struct meta_t { bit<8> path; bit<8> sub; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.k);
        transition select(h.k.a, h.k.b) {
            (0x0800, _): s1;
            (0x8600 &&& 0xFF00, 1): s2;
            (0x1000 .. 0x1FFF, _): s3;
            (_, 0xF0 &&& 0xF0): s4;
            default: s5;
        }
    }
    state s1 { m.path = 1; transition common; }
    state s2 { m.path = 2; transition common; }
    state s3 { m.path = 3; transition common; }
    state s4 { m.path = 4; transition common; }
    state s5 { m.path = 5; transition common; }
    state common {
        transition select(h.k.b[3:0]) {
            0: low_zero;
            1 .. 7: low_small;
            default: accept;
        }
    }
    state low_zero { m.sub = 10; transition accept; }
    state low_small { m.sub = 20; transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.path = m.path;
        h.o.sub = m.sub;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
