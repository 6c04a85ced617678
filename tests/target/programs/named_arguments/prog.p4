// Named arguments (P4_16 8.20), in an order other than the parameters': V1Switch's six blocks bound by name
// (v1model.p4's p, vr, ig, eg, ck, dep), verify_checksum/update_checksum and emit called with named arguments,
// and a control's constructor parameter given by name. A block bound to the wrong role would not compute the
// checksum (ck), would not flag a bad one (vr) or would not forward (ig).
#include <core.p4>
#include <v1model.p4>

header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header out_t { bit<8> csum_ok; bit<8> tag; }
struct headers_t { out_t o; ipv4_t ip; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr = h.ip); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum(
            checksum = h.ip.csum,
            algo = HashAlgorithm.csum16,
            data = { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.len, h.ip.id, h.ip.flags, h.ip.frag, h.ip.ttl,
                     h.ip.proto, h.ip.src, h.ip.dst },
            condition = h.ip.isValid());
    }
}
control Tag(inout out_t o)(bit<8> first, bit<8> second) {
    apply { o.tag = first - second; }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Tag(second = 8w3, first = 8w10) tag;
    apply {
        h.o.setValid();
        h.o.csum_ok = sm.checksum_error == 0 ? 8w1 : 8w0;
        tag.apply(h.o);
        h.ip.ttl = h.ip.ttl - 1;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum(
            algo = HashAlgorithm.csum16,
            checksum = h.ip.csum,
            condition = h.ip.isValid(),
            data = { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.len, h.ip.id, h.ip.flags, h.ip.frag, h.ip.ttl,
                     h.ip.proto, h.ip.src, h.ip.dst });
    }
}
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(hdr = h.o); pkt.emit(hdr = h.ip); } }

V1Switch(dep = D(), ck = CC(), eg = E(), p = P(), ig = I(), vr = VC()) main;
