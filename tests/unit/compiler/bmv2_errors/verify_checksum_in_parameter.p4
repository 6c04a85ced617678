// p4c: testdata/p4_16_bmv_errors/issue376-bmv2.p4, issue610-bmv2.p4, issue679-bmv2.p4, nested-headers-bmv2.p4 and
// no-header2-bmv2.p4 (messages in testdata/p4_16_bmv_errors_outputs/): p4c's type checker unifies each V1Switch
// argument with v1model's block type, and VerifyChecksum's headers parameter is inout. p4c reports the V1Switch
// instantiation with this as the "Actual error" at the block's parameter.
// expect-error: 17:39: Cannot unify 'in' parameter 'hdr' with 'inout' parameter 'hdr' because they have different directions
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; bit<2> color; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerifyChecksum(in headers_t hdr, inout meta_t meta) {
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
    apply {  }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
