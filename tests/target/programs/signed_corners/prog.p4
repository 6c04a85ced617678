// Signed corners: arithmetic right shift by run-time amounts (by the width or more the sign fills every bit),
// left shift of negatives, signed multiplication wrap, comparison with negative constants, saturation at the
// most negative value, and casts of negative constants to bit<W>.
#include <core.p4>
#include <v1model.p4>

header in_t  { int<8> a; bit<8> n; int<8> b; }
header out_t { int<8> shr; int<8> shl; int<8> mul; bit<8> lt_neg; int<8> sat_neg; bit<8> neg_const;
               int<8> neg_of_min; }
struct headers_t { out_t o; in_t i; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.shr = h.i.a >> h.i.n;
        h.o.shl = h.i.a << h.i.n;
        h.o.mul = h.i.a * h.i.b;
        h.o.lt_neg = (h.i.a < -5) ? 8w1 : 8w0;
        h.o.sat_neg = h.i.a |-| h.i.b;
        h.o.neg_const = (bit<8>) -8s1;
        h.o.neg_of_min = -h.i.a;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.i); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
