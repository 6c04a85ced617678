// Ternary matching: without priorities the first const entry wins; with explicit `priority =` the numerically
// largest priority wins (P4_16 largest_priority_wins default), whatever the source order.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<8> b; }
header out_t { bit<8> first; bit<8> prio; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action set_first(bit<8> v) { h.o.first = v; }
    action set_prio(bit<8> v) { h.o.prio = v; }
    table by_order {
        key = { h.k.a : ternary; h.k.b : ternary; }
        actions = { set_first; NoAction; }
        const entries = {
            (0x10 &&& 0xF0, _) : set_first(1);
            (0x12, 0x34) : set_first(2);
            (_, 0x30 &&& 0xF0) : set_first(3);
            (_, _) : set_first(4);
        }
        default_action = NoAction();
    }
    table by_priority {
        key = { h.k.a : ternary; }
        actions = { set_prio; NoAction; }
        const entries = {
            priority = 10 : 0x00 &&& 0x00 : set_prio(10);
            priority = 30 : 0x12 &&& 0xFF : set_prio(30);
            priority = 20 : 0x10 &&& 0xF0 : set_prio(20);
        }
        default_action = NoAction();
    }
    apply {
        h.o.setValid();
        h.o.first = 0;
        h.o.prio = 0;
        by_order.apply();
        by_priority.apply();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
