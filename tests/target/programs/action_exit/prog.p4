// exit inside an action run by a table ends the ingress control: statements after the apply() do not run.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<8> trace; }
struct headers_t { k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action stop() { h.k.trace = h.k.trace | 1; exit; }
    action go() { h.k.trace = h.k.trace | 2; }
    table t {
        key = { h.k.a : exact; }
        actions = { stop; go; }
        const entries = { 1 : stop(); }
        default_action = go();
    }
    apply {
        h.k.trace = 0;
        sm.egress_spec = 1;
        t.apply();
        h.k.trace = h.k.trace | 4;
        sm.egress_spec = 2;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
