// Re-expressed from p4c testdata/p4_16_samples/issue447-1-bmv2.p4: two 16-bit extractions into varbit<32>
// headers (each consumes the 16 bits asked for, not the field's maximum), emitted in swapped order.
#include <core.p4>
#include <v1model.p4>

header H { varbit<32> var; }
struct Parsed_packet { H h1; H h2; }
struct Metadata { }

parser parserI(packet_in pkt, out Parsed_packet hdr, inout Metadata meta, inout standard_metadata_t stdmeta) {
    state start {
        pkt.extract<H>(hdr.h1, 32w16);
        pkt.extract<H>(hdr.h2, 32w16);
        transition accept;
    }
}

control DeparserI(packet_out packet, in Parsed_packet hdr) { apply { packet.emit(hdr.h2); packet.emit(hdr.h1); } }
control ingress(inout Parsed_packet hdr, inout Metadata meta, inout standard_metadata_t stdmeta) { apply { } }
control egress(inout Parsed_packet hdr, inout Metadata meta, inout standard_metadata_t stdmeta) { apply { } }
control vc(inout Parsed_packet hdr, inout Metadata meta) { apply { } }
control uc(inout Parsed_packet hdr, inout Metadata meta) { apply { } }
V1Switch<Parsed_packet, Metadata>(parserI(), vc(), ingress(), egress(), uc(), DeparserI()) main;
