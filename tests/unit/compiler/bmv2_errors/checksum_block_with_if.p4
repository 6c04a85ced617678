// p4c: backends/bmv2/simple_switch/simpleSwitch.cpp (SimpleSwitchBackend::convertChecksum): BMv2 checksum blocks
// hold checksum units only, so every statement of MyComputeChecksum must be an update_checksum call (its first
// argument is the condition). p4c prints a statement by its IR class name (as in "IfStatement: not supported within a
// deparser on this target" in p4c-bm2-ss logs).
// expect-error: 34:13: IfStatement: Only calls to update_checksum or update_checksum_with_payload allowed
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; bit<2> color; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {  }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    apply {

    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    apply {  }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { if (hdr.h.isValid()) { update_checksum(true, { hdr.h.a }, hdr.h.b, HashAlgorithm.csum16); } }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
