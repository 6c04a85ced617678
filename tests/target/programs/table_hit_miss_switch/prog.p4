// Table results: apply().hit and .miss, switch on apply().action_run with grouped labels (fall-through) and a
// default label, and a const default_action.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; }
header out_t { bit<8> hit; bit<8> miss; bit<8> sw; bit<8> act; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action a1() { h.o.act = 1; }
    action a2() { h.o.act = 2; }
    action a3() { h.o.act = 3; }
    action dflt() { h.o.act = 9; }
    table t1 {
        key = { h.k.a : exact; }
        actions = { a1; a2; a3; dflt; }
        const entries = { 1 : a1(); 2 : a2(); 3 : a3(); 4 : dflt(); }
        const default_action = dflt();
    }
    table t2 {
        key = { h.k.a : exact; }
        actions = { a1; a2; a3; dflt; }
        const entries = { 1 : a1(); 2 : a2(); 3 : a3(); 4 : dflt(); }
        const default_action = dflt();
    }
    table t3 {
        key = { h.k.a : exact; }
        actions = { a1; a2; a3; dflt; }
        const entries = { 1 : a1(); 2 : a2(); 3 : a3(); 4 : dflt(); }
        const default_action = dflt();
    }
    apply {
        h.o.setValid();
        h.o.hit = 0;
        h.o.miss = 0;
        h.o.sw = 0;
        if (t1.apply().hit) { h.o.hit = 1; }
        if (t2.apply().miss) { h.o.miss = 1; }
        switch (t3.apply().action_run) {
            a1:
            a2: { h.o.sw = 12; }
            a3: { h.o.sw = 3; }
            default: { h.o.sw = 0xDD; }
        }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
