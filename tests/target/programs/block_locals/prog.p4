// Locals at every level: parser-scope variables and constants carried across states, control-scope constants
// and variables shared by actions within one packet (fresh for each packet), block-scoped shadowing, and
// user metadata written in ingress and read in egress.
#include <core.p4>
#include <v1model.p4>

header e_t { bit<8> v; }
header out_t { bit<8> parsed_sum; bit<8> seen; bit<8> shadow; bit<8> from_ingress; }
struct headers_t { out_t o; e_t a; e_t b; }
struct meta_t { bit<8> parsed_sum; bit<8> carried; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    const bit<8> BIAS = 100;
    bit<8> sum = BIAS;
    state start {
        pkt.extract(h.a);
        sum = sum + h.a.v;
        transition second;
    }
    state second {
        pkt.extract(h.b);
        sum = sum + h.b.v;
        m.parsed_sum = sum;
        transition accept;
    }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    const bit<8> STEP = 3;
    bit<8> seen = 0;
    action note() { seen = seen + STEP; }
    apply {
        h.o.setValid();
        note();
        note();
        h.o.seen = seen;
        bit<8> x = 1;
        {
            bit<8> y = 10;
            x = x + y;
        }
        h.o.shadow = x;
        h.o.parsed_sum = m.parsed_sum;
        m.carried = h.a.v ^ 0xFF;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { h.o.from_ingress = m.carried; }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.a); pkt.emit(h.b); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
