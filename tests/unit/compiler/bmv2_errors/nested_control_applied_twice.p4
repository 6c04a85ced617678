// p4c: backends/bmv2/common/controlFlowGraph.cpp (CFG::dfs), as in testdata/p4_16_bmv_errors/loop-bmv2.p4.
// p4c inlines a control instance at each of its apply calls but keeps one copy of its tables, so applying the
// instance twice applies its table twice on one path.
// expect-error: 22:11: Program can not be implemented on this target since it contains a path from table MyIngress.sub.t back to itself
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

control Sub(inout headers_t hdr) {
    action nop() { }
    table t { key = { hdr.h.a : exact; } actions = { nop; } default_action = nop; }
    apply { t.apply(); }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() sub;
    apply {
        sub.apply(hdr);
        sub.apply(hdr);
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
