// Bitwise and logical operators, comparisons, the conditional operator, and P4's precedence (& binds tighter
// than ==, unlike C: `a & 0x80 == 0x80` is `(a & 0x80) == 0x80`).
#include <core.p4>
#include <v1model.p4>

header in_t  { bit<8> a; bit<8> b; }
header out_t { bit<8> band; bit<8> bor; bit<8> bxor; bit<8> flags; bit<8> max; bit<8> min; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        bit<8> a = h.i.a;
        bit<8> b = h.i.b;
        h.o.setValid();
        h.o.band = a & b;
        h.o.bor = a | b;
        h.o.bxor = a ^ b;
        bit<8> f = 0;
        if (a == b) { f = f | 1; }
        if (a != b && a > b) { f = f | 2; }
        if (a < b || a == 0) { f = f | 4; }
        if (!(a <= b)) { f = f | 8; }
        if (a & 0x80 == 0x80) { f = f | 16; }
        if (a >= b) { f = f | 32; } else { f = f | 64; }
        h.o.flags = f;
        h.o.max = a > b ? a : b;
        h.o.min = a < b ? a : b;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
