// Tables filled at run time from a P4Runtime WriteRequest: exact, ternary with priorities (higher wins), lpm,
// and a modified default action.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<16> id; bit<8> flags; bit<32> dst; }
header out_t { bit<8> e; bit<8> t; bit<8> l; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action set_e(bit<8> v, bit<9> port) { h.o.e = v; sm.egress_spec = port; }
    action set_t(bit<8> v) { h.o.t = v; }
    action set_l(bit<8> v) { h.o.l = v; }
    table ex {
        key = { h.k.id : exact; }
        actions = { set_e; NoAction; }
        default_action = NoAction();
        size = 16;
    }
    table tern {
        key = { h.k.flags : ternary; }
        actions = { set_t; }
        default_action = set_t(0);
    }
    table lp {
        key = { h.k.dst : lpm; }
        actions = { set_l; }
        default_action = set_l(0);
    }
    apply {
        h.o.setValid();
        h.o.e = 0;
        sm.egress_spec = 1;
        ex.apply();
        tern.apply();
        lp.apply();
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
