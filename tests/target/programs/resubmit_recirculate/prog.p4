// resubmit_preserving_field_list (ingress runs again on the original packet, instance_type 6) and
// recirculate_preserving_field_list (the deparsed packet is parsed again, instance_type 4). Only the fields of
// the named @field_list survive; the packet that requested either is not sent out itself. As in BMv2, a unicast
// packet enters egress with instance_type 0 even after a recirculation, so the preserved field guards the loop.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> mode; bit<8> passes; }
header out_t { bit<8> itype; bit<8> keep; bit<8> lost; }
struct headers_t { k_t k; out_t o; }
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
        h.k.passes = h.k.passes + 1;
        sm.egress_spec = 1;
        h.o.setValid();
        h.o.itype = (bit<8>) sm.instance_type;
        h.o.keep = m.keep;
        h.o.lost = m.lost;
        if (h.k.mode == 1 && sm.instance_type == 0) {
            m.keep = 0x33;
            m.lost = 0x44;
            resubmit_preserving_field_list(1);
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.k.mode == 2 && m.keep == 0) {
            m.keep = 0x55;
            m.lost = 0x66;
            recirculate_preserving_field_list(1);
        }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.k); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
