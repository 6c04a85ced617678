// Structured values: struct initializers { f = v }, list expressions assigned to structs and headers (which
// become valid), tuples indexed by constants, struct copies, and nested structs.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<16> b; }
header out_t { bit<8> x; bit<16> y; bit<8> t0; bit<16> t1; bit<8> inner; }
struct pair_t { bit<8> x; bit<16> y; }
struct nest_t { pair_t p; bit<8> extra; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        pair_t p = { x = h.k.a, y = h.k.b };
        pair_t q = p;
        q.x = q.x + 1;
        tuple<bit<8>, bit<16>> t = { h.k.a ^ 0xFF, h.k.b + 1 };
        nest_t n = { p = { x = 7, y = 8 }, extra = 9 };
        n.p.x = n.p.x + n.extra;
        h.o = { q.x, p.y, t[0], t[1], n.p.x };
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
