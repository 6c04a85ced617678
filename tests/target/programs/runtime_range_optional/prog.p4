// Range and optional keys filled at run time (P4Runtime FieldMatch range/optional, with priorities: the higher
// priority wins among overlapping entries); an omitted optional field is a wildcard.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<16> port; bit<8> proto; }
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
        key = { h.k.port : range; h.k.proto : optional; }
        actions = { set; }
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
