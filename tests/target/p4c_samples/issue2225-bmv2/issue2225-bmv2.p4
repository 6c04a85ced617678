// Re-expressed from p4c testdata/p4_16_samples/issue2225-bmv2.p4: an action called directly with an `inout`
// parameter assigns it and then executes `exit`; the parameter is still copied back to its argument.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst_addr; bit<48> src_addr; bit<16> eth_type; }
struct Headers { ethernet_t eth_hdr; }
struct Meta { }

parser p(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth_hdr); transition accept; }
}

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    action do_action(inout bit<16> val_0) {
        val_0 = 3;
        exit;
    }
    apply { do_action(h.eth_hdr.eth_type); }
}

control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out b, in Headers h) { apply { b.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
