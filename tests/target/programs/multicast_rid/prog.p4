// Multicast replication: one copy per replica of the group, each with its egress_port and egress_rid and
// instance_type 5 (replication); two replicas on the same port keep their order.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<16> grp; }
header out_t { bit<16> rid; bit<8> eport; bit<8> itype; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.k.grp == 0) {
            sm.egress_spec = 4;
        } else {
            sm.mcast_grp = h.k.grp;
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.rid = sm.egress_rid;
        h.o.eport = (bit<8>) sm.egress_port;
        h.o.itype = (bit<8>) sm.instance_type;
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
