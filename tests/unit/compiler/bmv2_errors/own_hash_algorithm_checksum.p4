// p4c: testdata/p4_16_bmv_errors/issue5464-bmv2.p4 (message: testdata/p4_16_bmv_errors_outputs/issue5464-bmv2.p4-stderr).
// A program that declares v1model's names itself, its own HashAlgorithm among them, instead of including
// v1model.p4: p4c's mid end turns that enum into bit<32> (only v1model.p4's is kept), so the checksum converter gets
// the member's number (csum16 is member 1 here) where it expects a member. Caret at the argument.
// expect-error: 29:59: 32w1: expected a HashAlgorithm member
#include <core.p4>

struct standard_metadata_t { bit<9> ingress_port; bit<9> egress_spec; }
enum HashAlgorithm { crc32, csum16 }
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta, inout standard_metadata_t standard_metadata);
control VerifyChecksum<H, M>(inout H hdr, inout M meta);
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control ComputeChecksum<H, M>(inout H hdr, inout M meta);
control Deparser<H>(packet_out b, in H hdr);
package V1Switch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, Ingress<H, M> ig, Egress<H, M> eg,
                       ComputeChecksum<H, M> ck, Deparser<H> dep);

header h_t { bit<16> a; bit<16> sum; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { verify_checksum(true, { hdr.h.a }, hdr.h.sum, HashAlgorithm.csum16); }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
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
