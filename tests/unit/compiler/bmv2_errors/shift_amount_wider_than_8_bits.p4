// p4c: backends/bmv2/common/lower.cpp (LowerExpressions::shift; lower.h: "Cannot shift with a value larger than 8
// bits", maxShiftWidth = 8): BMv2's shift takes an 8-bit amount, so a run-time amount of type bit<16> is refused.
// expect-error: 23:23: hdr.h.addr << meta.amount: shift amount limited to 8 bits on this target
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; bit<16> amount; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {  }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    apply {
        meta.amount = (bit<16>)hdr.h.a;
        hdr.h.addr2 = hdr.h.addr << meta.amount;
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
