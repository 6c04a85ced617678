// p4c: testdata/p4_16_bmv_errors/issue383-err-bmv2.p4 (message:
// testdata/p4_16_bmv_errors_outputs/issue383-err-bmv2.p4-stderr): a control named like v1model's extern function
// verify_checksum. p4c ends the message with ": " and then points at v1model.p4's declaration.
// expect-error: 20:9: Re-declaration of verify_checksum with different type:
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

control verify_checksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
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
