// p4c: testdata/p4_16_bmv_errors/issue5464-hash-bmv2.p4 (message:
// testdata/p4_16_bmv_errors_outputs/issue5464-hash-bmv2.p4-stderr). As own_hash_algorithm_checksum.p4, with the
// program's own enum reaching hash(): p4c's hash converter words the error with a question about v1model.p4.
// crc16 is member 2 of this enum.
// expect-error: 29:31: 32w2: expected a HashAlgorithm member. Are you using an up-to-date v1model.p4?
#include <core.p4>

struct standard_metadata_t { bit<9> ingress_port; bit<9> egress_spec; }
enum HashAlgorithm { crc32, csum16, crc16 }
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);
parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta, inout standard_metadata_t standard_metadata);
control VerifyChecksum<H, M>(inout H hdr, inout M meta);
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control ComputeChecksum<H, M>(inout H hdr, inout M meta);
control Deparser<H>(packet_out b, in H hdr);
package V1Switch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, Ingress<H, M> ig, Egress<H, M> eg,
                       ComputeChecksum<H, M> ck, Deparser<H> dep);

header h_t { bit<16> a; bit<16> b; }
struct headers_t { h_t h; }
struct meta_t { bit<16> bucket; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hash(meta.bucket, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.b }, 16w8); sm.egress_spec = 1; }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
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
