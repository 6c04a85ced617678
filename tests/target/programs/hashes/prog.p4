// hash() with each of BMv2's algorithms over a field list (crc16, crc32, csum16, xor16, identity), with a base
// and a modulus, and with max = 1 (the result is the base).
#include <core.p4>
#include <v1model.p4>

header k_t { bit<16> a; bit<32> b; bit<8> c; }
header out_t { bit<16> crc16; bit<32> crc32; bit<16> csum16; bit<16> xor16; bit<32> ident; bit<16> ranged;
               bit<16> zero_max; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        hash(h.o.crc16, HashAlgorithm.crc16, 16w0, { h.k.a, h.k.b, h.k.c }, 32w65536);
        hash(h.o.crc32, HashAlgorithm.crc32, 32w0, { h.k.a, h.k.b, h.k.c }, 64w4294967296);
        hash(h.o.csum16, HashAlgorithm.csum16, 16w0, { h.k.a, h.k.b }, 32w65536);
        hash(h.o.xor16, HashAlgorithm.xor16, 16w0, { h.k.a, h.k.b }, 32w65536);
        hash(h.o.ident, HashAlgorithm.identity, 32w0, { h.k.b }, 64w4294967296);
        hash(h.o.ranged, HashAlgorithm.crc32, 16w1000, { h.k.b, h.k.c }, 16w50);
        hash(h.o.zero_max, HashAlgorithm.crc16, 16w77, { h.k.a }, 16w1);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
