// Standard metadata seen by a program: ingress_port, packet_length, egress_spec -> egress_port, instance_type;
// packets from several ports are sent back where they came from.
#include <core.p4>
#include <v1model.p4>

header out_t { bit<16> in_port; bit<16> e_port; bit<32> length; bit<32> itype; }
struct headers_t { out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.in_port = (bit<16>) sm.ingress_port;
        h.o.length = sm.packet_length;
        sm.egress_spec = sm.ingress_port;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.e_port = (bit<16>) sm.egress_port;
        h.o.itype = sm.instance_type;
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
