// Actions whose out/inout parameters are bound in a table's actions list (P4_16 spec, "Actions": directional
// parameters are bound where the action is listed, data-plane parameters come from the entry). The bound
// arguments are written back when the table runs the action; an `exit` in the action still copies them back
// (spec, "exit statement"), and nothing after the table applies then.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> a; bit<8> b; bit<8> c; bit<8> tail; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set_out(out bit<8> dst, bit<8> v) { dst = v; }
    action bump(inout bit<8> x, bit<8> d) { x = x + d; }
    action set_then_exit(inout bit<8> x, bit<8> v) { x = v; exit; }
    table t {
        key = { hdr.h.k : exact; }
        actions = { set_out(hdr.h.a); bump(hdr.h.b); set_then_exit(hdr.h.c); NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        hdr.h.tail = hdr.h.tail + 1;  // not reached after set_then_exit
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
