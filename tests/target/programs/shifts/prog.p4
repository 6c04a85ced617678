// Shifts by constants and by run-time amounts; shifting by the width or more gives 0.
#include <core.p4>
#include <v1model.p4>

header in_t  { bit<8> a; bit<8> n; bit<16> w; }
header out_t { bit<8> shl; bit<8> shr; bit<8> shl_var; bit<8> shr_var; bit<16> wshl; bit<16> wshr_var;
               bit<8> shr_big; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.shl = h.i.a << 3;
        h.o.shr = h.i.a >> 3;
        h.o.shl_var = h.i.a << h.i.n;
        h.o.shr_var = h.i.a >> h.i.n;
        h.o.wshl = h.i.w << 4w9;
        h.o.wshr_var = h.i.w >> h.i.n;
        h.o.shr_big = h.i.a >> (h.i.n + 8);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
