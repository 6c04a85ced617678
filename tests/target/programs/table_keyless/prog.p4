// A table without a key always runs its default action; actions with directional (inout) parameters called
// directly; actions calling actions; a default action whose data comes from constants.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; }
header out_t { bit<8> x; bit<8> y; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

const bit<8> BASE = 40;

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action add_to(inout bit<8> target, in bit<8> amount) { target = target + amount; }
    action set_x(bit<8> v) { h.o.x = v; add_to(h.o.x, h.k.a); }
    table always {
        actions = { set_x; }
        default_action = set_x(BASE + 2);
    }
    apply {
        h.o.setValid();
        h.o.y = 1;
        always.apply();
        add_to(h.o.y, h.k.a);
        add_to(h.o.y, 8w100);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
