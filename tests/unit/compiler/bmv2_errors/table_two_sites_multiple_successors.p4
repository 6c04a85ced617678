// p4c: backends/bmv2/common/controlFlowGraph.cpp (CFG::checkMergeable); measured with p4c-bm2-ss 1.2.5.16 on
// p4src/include/pfc.p4, whose pfc_port was applied in both branches of an if, followed by different code
// (../shared/design.md). Apply sites of one table must all have the same successors.
// expect-error: 22:11: Program is not supported by this target, because table MyIngress.pfc.pfc_port has multiple successors
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

control Pfc(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action nop() { }
    table pfc_port { key = { sm.ingress_port : exact; } actions = { nop; } default_action = nop; }
    apply {
        if (hdr.h.a == 1) {
            pfc_port.apply();
            hdr.h.b = 1;
        } else {
            pfc_port.apply();
        }
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Pfc() pfc;
    apply {
        pfc.apply(hdr, meta, sm);
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
