// Controls instantiated inside controls with constructor parameters, applied with arguments; a table inside a
// sub-control (its P4Info name is qualified by the instance path).
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; }
header out_t { bit<8> v; bit<8> looked_up; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

control Add(inout bit<8> v)(bit<8> amount) {
    apply { v = v + amount; }
}

control Lookup(in bit<8> key, out bit<8> result) {
    action set(bit<8> r) { result = r; }
    table t {
        key = { key : exact; }
        actions = { set; }
        const entries = { 1 : set(0x11); 2 : set(0x22); }
        default_action = set(0xEE);
    }
    apply { t.apply(); }
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Add(8w1) inc1;
    Add(8w10) inc10;
    Lookup() lookup;
    apply {
        h.o.setValid();
        h.o.v = h.k.a;
        inc1.apply(h.o.v);
        inc10.apply(h.o.v);
        inc10.apply(h.o.v);
        lookup.apply(h.k.a, h.o.looked_up);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
