// p4c: testdata/p4_16_bmv_errors/loop-bmv2.p4 (message: testdata/p4_16_bmv_errors_outputs/loop-bmv2.p4-stderr).
// A table applied twice on one path: p4c-bm2-ss's control-flow graph (backends/bmv2/common/controlFlowGraph.cpp)
// has one node per apply site and rejects a path from a table back to itself.
// expect-error: 22:11: Program can not be implemented on this target since it contains a path from table MyIngress.t back to itself
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
    table t { key = { meta.x : exact; } actions = { nop; } default_action = nop; }
    apply {
        meta.x = hdr.h.a;
        t.apply();
        meta.x = hdr.h.b;
        t.apply();
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
