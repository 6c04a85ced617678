// optional match kind: an entry either matches the value exactly or (with _) anything; mixed with exact keys.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> proto; bit<16> port; }
header out_t { bit<8> v; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.o.v = v; }
    table t {
        key = { h.k.proto : exact; h.k.port : optional; }
        actions = { set; }
        const entries = {
            (6, 80) : set(1);
            (6, _) : set(2);
            (17, 53) : set(3);
        }
        default_action = set(0);
    }
    apply {
        h.o.setValid();
        t.apply();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
