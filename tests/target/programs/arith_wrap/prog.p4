// Exact-width unsigned arithmetic: + - * wrap modulo 2^W, unary minus and complement, on bit<8> and bit<16>.
#include <core.p4>
#include <v1model.p4>

header in_t  { bit<8> a; bit<8> b; bit<16> c; bit<16> d; }
header out_t { bit<8> sum8; bit<8> diff8; bit<8> mul8; bit<16> sum16; bit<16> diff16; bit<16> mul16;
               bit<8> neg8; bit<8> inv8; bit<8> chain; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.sum8 = h.i.a + h.i.b;
        h.o.diff8 = h.i.a - h.i.b;
        h.o.mul8 = h.i.a * h.i.b;
        h.o.sum16 = h.i.c + h.i.d;
        h.o.diff16 = h.i.c - h.i.d;
        h.o.mul16 = h.i.c * h.i.d;
        h.o.neg8 = -h.i.a;
        h.o.inv8 = ~h.i.a;
        h.o.chain = h.i.a * 3 + h.i.b - 7;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.i); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
