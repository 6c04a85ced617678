// p4c: backends/bmv2/common/check_unsupported.h after p4c pull request 5552 (March 2026): a `for` statement in an
// action body is lowered to BMv2's _jump primitives, a `for`-in loop is still rejected, in an action or anywhere.
// expect-error: 18:9: BMV2 does not support loops
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; bit<8> y; }
struct headers_t { a_t a; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.a); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action add_range() {
        for (bit<8> k = 0; k < h.a.x; k = k + 1) { h.a.y = h.a.y + 1; }
        for (bit<8> k in 1 .. 3) { h.a.y = h.a.y + k; }
    }
    apply {
        add_range();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.a); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
