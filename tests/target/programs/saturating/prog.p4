// Saturating arithmetic |+| and |-| on unsigned and signed values.
#include <core.p4>
#include <v1model.p4>

header in_t  { bit<8> a; bit<8> b; int<8> x; int<8> y; }
header out_t { bit<8> usum; bit<8> udiff; int<8> ssum; int<8> sdiff; bit<16> wide; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.usum = h.i.a |+| h.i.b;
        h.o.udiff = h.i.a |-| h.i.b;
        h.o.ssum = h.i.x |+| h.i.y;
        h.o.sdiff = h.i.x |-| h.i.y;
        h.o.wide = ((bit<16>) h.i.a) |+| 16w65000;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.i); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
