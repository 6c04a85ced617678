// p4c: testdata/p4_16_errors/duplicate-switch-case.p4 (message:
// testdata/p4_16_errors_outputs/duplicate-switch-case.p4-stderr). p4c prints the labels as it typed them
// (4w1 there); this target prints them as written.
// expect-error: 25:13: 8w1: 'switch' label duplicates 8w1
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
        switch (hdr.h.a) {
            8w1: { hdr.h.b = 1; }
            8w1: { hdr.h.b = 2; }
            default: { }
        }
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
