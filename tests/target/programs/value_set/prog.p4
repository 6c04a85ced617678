// A parser value_set filled by the control plane (P4Runtime ValueSetEntry) and used as a select case.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<16> a; }
header out_t { bit<8> path; }
struct headers_t { out_t o; k_t k; }
struct meta_t { bit<8> path; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) vs;
    state start {
        pkt.extract(h.k);
        transition select(h.k.a) {
            0x0001: one;
            vs: in_set;
            default: accept;
        }
    }
    state one { m.path = 1; transition accept; }
    state in_set { m.path = 2; transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.path = m.path;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
