// p4c: backends/bmv2/common/controlFlowGraph.cpp (CFG::checkMergeable). t2 is applied in two switch cases; in one
// an assignment follows it, in the other nothing does, so its two nodes have different successors.
// expect-error: 23:11: Program is not supported by this target, because table MyIngress.t2 has multiple successors
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
    action other() { }
    table t1 { key = { hdr.h.a : exact; } actions = { nop; other; } default_action = nop; }
    table t2 { key = { hdr.h.b : exact; } actions = { nop; } default_action = nop; }
    apply {
        switch (t1.apply().action_run) {
            nop: { t2.apply(); hdr.h.a = 1; }
            other: { t2.apply(); }
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
