// Table keys that are expressions: a bit slice, isValid() (bool entries), and a metadata field; actions with
// directionless parameters also called directly from the apply block.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<8> b; }
header opt_t { bit<8> v; }
header out_t { bit<8> r; bit<8> direct; }
struct headers_t { out_t o; k_t k; opt_t opt; }
struct meta_t { bit<4> nib; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.k);
        transition select(h.k.b) { 1: with_opt; default: accept; }
    }
    state with_opt { pkt.extract(h.opt); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> r) { h.o.r = r; }
    action mark(bit<8> d) { h.o.direct = d; }
    table t {
        key = {
            h.k.a[7:4] : exact;
            h.opt.isValid() : exact;
            m.nib : ternary;
        }
        actions = { set; }
        const entries = {
            (0xA, true, _) : set(1);
            (0xA, false, 0x3 &&& 0xF) : set(2);
            (0xA, false, _) : set(3);
            (0xB, true, 0x0 &&& 0x8) : set(4);
        }
        default_action = set(0xFF);
    }
    apply {
        h.o.setValid();
        m.nib = h.k.a[3:0];
        t.apply();
        mark(0x5A);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); pkt.emit(h.opt); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
