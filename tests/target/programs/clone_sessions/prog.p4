// Clones. I2E: a copy of the packet as received (ingress changes not applied) goes to the session's port with
// instance_type 1 and user metadata reset, except fields of the preserved @field_list. E2E: a copy of the packet
// as egress left it goes through egress again with instance_type 2.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> mode; bit<8> mark; }
header out_t { bit<8> itype; bit<8> eport; bit<8> keep; bit<8> lost; }
struct headers_t { out_t o; k_t k; }
struct meta_t {
    @field_list(1)
    bit<8> keep;
    bit<8> lost;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.keep = 0x11;
        m.lost = 0x22;
        h.k.mark = 0xAA;
        sm.egress_spec = 1;
        if (h.k.mode == 1) {
            clone(CloneType.I2E, 5);
        } else if (h.k.mode == 2) {
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.itype = (bit<8>) sm.instance_type;
        h.o.eport = (bit<8>) sm.egress_port;
        h.o.keep = m.keep;
        h.o.lost = m.lost;
        if (h.k.mode == 3 && sm.instance_type == 0) {
            clone(CloneType.E2E, 6);
        }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
