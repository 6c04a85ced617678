// p4c: testdata/p4_16_samples/issue986-bmv2.p4, which p4c-bm2-ss rejects with "Program is not supported by this
// target" (p4c's backends/p4tools testgen xfail list for BMv2): t1 applied in both branches of an if, each followed by
// its own assignment, so its two apply sites have different successors.
// expect-error: 21:11: Program is not supported by this target, because table MyIngress.t1 has multiple successors
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
    table t1 { actions = { NoAction; } }
    apply {
        if (meta.x == 0) {
            t1.apply();
            sm.egress_spec = 1;
        } else {
            t1.apply();
            sm.egress_spec = 2;
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
