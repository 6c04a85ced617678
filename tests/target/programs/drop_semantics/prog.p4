// Dropping: mark_to_drop in ingress, a later egress_spec overriding it, egress_spec = 511 directly, mark_to_drop
// clearing mcast_grp, multicast after all, and mark_to_drop in egress.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> mode; }
struct headers_t { k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.k.mode == 1) {
            mark_to_drop(sm);
        } else if (h.k.mode == 2) {
            mark_to_drop(sm);
            sm.egress_spec = 2;
        } else if (h.k.mode == 3) {
            sm.egress_spec = 511;
        } else if (h.k.mode == 4) {
            sm.mcast_grp = 1;
            mark_to_drop(sm);
        } else if (h.k.mode == 5) {
            sm.mcast_grp = 1;
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.k.mode == 6) {
            mark_to_drop(sm);
        }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
