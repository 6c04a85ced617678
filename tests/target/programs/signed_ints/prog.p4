// Signed int<W>: two's complement wraparound, signed comparison, arithmetic right shift, sign-extending casts and
// reinterpretation between int<8> and bit<8>; signed literals (8s).
#include <core.p4>
#include <v1model.p4>

header in_t  { int<8> a; int<8> b; }
header out_t { int<8> sum; int<8> diff; int<8> neg; bit<8> lt; bit<8> ge; int<8> shr; int<16> wide;
               bit<8> raw; int<8> lit; bit<16> wide_raw; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.sum = h.i.a + h.i.b;
        h.o.diff = h.i.a - h.i.b;
        h.o.neg = -h.i.a;
        h.o.lt = (h.i.a < h.i.b) ? 8w1 : 8w0;
        h.o.ge = (h.i.a >= h.i.b) ? 8w1 : 8w0;
        h.o.shr = h.i.a >> 2;
        h.o.wide = (int<16>) h.i.a;
        h.o.raw = (bit<8>) h.i.b;
        h.o.lit = h.i.a + -8s3;
        h.o.wide_raw = (bit<16>) ((int<16>) h.i.b);
        sm.egress_spec = 2;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.i); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
