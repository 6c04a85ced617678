// IPv4 header checksum: verify_checksum in VerifyChecksum sets checksum_error on a mismatch (visible in
// ingress); update_checksum in ComputeChecksum recomputes it after the TTL changes.
#include <core.p4>
#include <v1model.p4>

header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header out_t { bit<8> csum_ok; }
struct headers_t { out_t o; ipv4_t ip; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.ip); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum(h.ip.isValid(),
            { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.len, h.ip.id, h.ip.flags, h.ip.frag, h.ip.ttl, h.ip.proto,
              h.ip.src, h.ip.dst },
            h.ip.csum, HashAlgorithm.csum16);
    }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.csum_ok = sm.checksum_error == 0 ? 8w1 : 8w0;
        h.ip.ttl = h.ip.ttl - 1;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum(h.ip.isValid(),
            { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.len, h.ip.id, h.ip.flags, h.ip.frag, h.ip.ttl, h.ip.proto,
              h.ip.src, h.ip.dst },
            h.ip.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.ip); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
