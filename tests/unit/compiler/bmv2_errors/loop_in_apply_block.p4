// p4c: backends/bmv2/common/check_unsupported.h (CheckUnsupported): a for or for-in loop left outside an action
// body is reported as "BMV2 does not support loops" (a BMv2 control is an acyclic graph of tables and conditions,
// a parser a graph of states). A `for` inside an action compiles (p4c's testdata/p4_16_samples/forloop-bmv2.p4).
// expect-error: 22:9: BMV2 does not support loops
// expect-error: 25:9: BMV2 does not support loops
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
    action count_up() {
        for (bit<8> k = 0; k < h.a.x; k = k + 1) { h.a.y = h.a.y + 1; }
    }
    apply {
        for (bit<8> k = 0; k < h.a.x; k = k + 1) { h.a.y = h.a.y + 2; }
        count_up();
        sm.egress_spec = 1;
        for (bit<8> k in 1 .. 3) { h.a.y = h.a.y + k; }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.a); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
