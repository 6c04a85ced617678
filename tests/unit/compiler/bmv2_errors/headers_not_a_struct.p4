// p4c: testdata/p4_16_bmv_errors/issue1672-bmv2.p4 (message:
// testdata/p4_16_bmv_errors_outputs/issue1672-bmv2.p4-stderr); backends/bmv2/simple_switch/simpleSwitch.cpp: the
// parser's headers parameter must have a struct type.
// expect-error: 11:36: h_t: expected type to be a struct
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct meta_t { bit<8> x; }

parser MyParser(packet_in pkt, out h_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr); transition accept; }
}

control MyVerifyChecksum(inout h_t hdr, inout meta_t meta) {
    apply {  }
}

control MyIngress(inout h_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    apply {

    }
}

control MyEgress(inout h_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    apply {  }
}

control MyComputeChecksum(inout h_t hdr, inout meta_t meta) {
    apply {  }
}

control MyDeparser(packet_out pkt, in h_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
