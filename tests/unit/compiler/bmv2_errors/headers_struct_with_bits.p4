// p4c: testdata/p4_16_bmv_errors/no-header-bmv2.p4 (message: testdata/p4_16_bmv_errors_outputs/no-header-bmv2.p4-stderr);
// backends/bmv2/simple_switch/simpleSwitch.cpp: every field of the parser's headers struct must be a header, a
// header stack or a header union.
// expect-error: 12:36: headers_t: the type should be a struct of headers, stacks, or unions
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct headers_t { h_t h; bit<8> scratch; }
struct meta_t { bit<8> x; }

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
    apply {  }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
