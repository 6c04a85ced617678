// p4c: backends/bmv2/common/deparser.cpp (DeparserConverter::convertDeparserBody): a BMv2 deparser is a list of
// headers to emit; emitting an invalid header emits nothing, so no condition is needed (or allowed). The message is
// the one p4c-bm2-ss prints for tutorials' `if (hdr.ipv4.isValid()) { packet.emit(hdr.ipv4); }`.
// expect-error: 37:13: IfStatement: not supported within a deparser on this target
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

    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    apply {  }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {  }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { if (hdr.h.isValid()) { pkt.emit(hdr.h); } }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
