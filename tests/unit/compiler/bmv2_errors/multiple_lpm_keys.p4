// p4c: testdata/p4_16_bmv_errors/basic-bmv2.p4 (message: testdata/p4_16_bmv_errors_outputs/basic-bmv2.p4-stderr);
// backends/bmv2/common/control.cpp: a BMv2 table has at most one lpm key.
// expect-error: 21:11: multiple LPM keys in table MyIngress.ipv4_lpm not supported
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
    action nop() { }
    table ipv4_lpm { key = { hdr.h.addr : lpm; hdr.h.addr2 : lpm; } actions = { nop; } }
    apply {
        ipv4_lpm.apply();
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
