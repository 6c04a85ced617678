// p4c: testdata/p4_16_bmv_errors/header-not-multiple-of-bytes-bmv2.p4 (message:
// testdata/p4_16_bmv_errors_outputs/header-not-multiple-of-bytes-bmv2.p4-stderr); backends/bmv2/common/header.cpp.
// expect-error: 7:8: header hdr: Found header with fields totaling 41 bits.  BMv2 target only supports headers with fields totaling a multiple of 8 bits.
#include <core.p4>
#include <v1model.p4>

header hdr { bit<32> a; bit<9> b; }
struct headers_t { hdr h; }
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
