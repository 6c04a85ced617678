// p4c: testdata/p4_16_bmv_errors/no-header1-bmv2.p4 (message:
// testdata/p4_16_bmv_errors_outputs/no-header1-bmv2.p4-stderr): packet_in.extract takes a header.
// expect-error: 12:51: meta: argument must be a header
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; bit<2> color; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(meta); transition accept; }
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
