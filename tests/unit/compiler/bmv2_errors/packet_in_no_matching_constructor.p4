// p4c: testdata/p4_16_bmv_errors/packet_in-bmv2.p4 (message: testdata/p4_16_bmv_errors_outputs/packet_in-bmv2.p4-stderr).
// An extern instance whose type has no constructor with these arguments (core.p4's packet_in has none at all):
// p4c's type checker names the instance and the type, with its caret on the instance's name.
// expect-error: 21:17: pin: type packet_in has no matching constructor
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    packet_in() pin;
    apply { sm.egress_spec = 1; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
