// Direct type invocation (P4_16 15.1): `Scale.apply(...)` on a control type, no instance declared. It behaves as
// an instance `Scale() Scale;` of the enclosing control (p4c names it after the type, so its table is
// I.Scale.t in the P4Info). Entries written to that table change what the directly applied control does; a
// parser type applied directly from a parser state works the same way.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; bit<8> y; }
header b_t { bit<8> z; }
struct headers_t { a_t a; b_t b; }
struct meta_t { }

parser SubP(packet_in pkt, inout headers_t h) {
    state start { pkt.extract(h.b); transition accept; }
}
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.a); SubP.apply(pkt, h); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control Scale(inout bit<8> v, in bit<8> key) {
    action times(bit<8> k) { v = v * k; }
    action plus_one() { v = v + 1; }
    table t {
        key = { key : exact; }
        actions = { times; plus_one; }
        default_action = plus_one();
    }
    apply { t.apply(); }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        Scale.apply(h.a.y, h.a.x);
        h.b.z = h.b.z + 1;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.a); pkt.emit(h.b); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
