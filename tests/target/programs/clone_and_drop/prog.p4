// A clone is independent of what happens to the original: an I2E clone still leaves when the original is
// dropped in ingress, and an E2E clone still leaves when the original is dropped in egress.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> mode; bit<8> itype; }
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
            clone(CloneType.I2E, 5);
            mark_to_drop(sm);
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.k.itype = (bit<8>) sm.instance_type;
        if (h.k.mode == 2 && sm.instance_type == 0) {
            clone(CloneType.E2E, 5);
            mark_to_drop(sm);
        }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
