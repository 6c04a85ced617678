// Re-expressed from p4c testdata/p4_16_samples/issue2176-bmv2.p4: one field passed as three `inout` arguments of
// a direct action call; copy-out runs left to right, so the last parameter's value (0) is what the field keeps,
// and the `if` after the call sees it.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header H { bit<8> a; bit<8> b; }
struct Parsed_packet { ethernet_t eth; H h; }
struct Metadata { }

parser p(packet_in pkt, out Parsed_packet hdr, inout Metadata meta, inout standard_metadata_t stdmeta) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h); transition accept; }
}

control ingress(inout Parsed_packet h, inout Metadata m, inout standard_metadata_t sm) {
    action do_action_2(inout bit<8> val_0, inout bit<8> val_1, inout bit<8> val_2) {
        val_1 = 8w2;
        val_2 = 8w0;
    }
    apply {
        do_action_2(h.h.b, h.h.b, h.h.b);
        if (h.h.b > 8w1) {
            h.h.a = 1;
        }
    }
}

control egress(inout Parsed_packet hdr, inout Metadata meta, inout standard_metadata_t stdmeta) { apply { } }
control vrfy(inout Parsed_packet hdr, inout Metadata meta) { apply { } }
control update(inout Parsed_packet hdr, inout Metadata meta) { apply { } }
control deparser(packet_out packet, in Parsed_packet hdr) { apply { packet.emit(hdr); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
