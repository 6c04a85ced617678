// Plain IPv4 forwarding for bench/switch_pps.py: LPM on the destination, rewrite MACs, decrement TTL, recompute
// the header checksum. The routes are const entries so the benchmark needs no control plane.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
struct headers_t { ethernet_t eth; ipv4_t ipv4; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition select(h.eth.etype) { 0x0800: ip; default: accept; } }
    state ip { pkt.extract(h.ipv4); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum(h.ipv4.isValid(),
            { h.ipv4.version, h.ipv4.ihl, h.ipv4.tos, h.ipv4.len, h.ipv4.id, h.ipv4.flags, h.ipv4.frag,
              h.ipv4.ttl, h.ipv4.proto, h.ipv4.src, h.ipv4.dst },
            h.ipv4.csum, HashAlgorithm.csum16);
    }
}

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action forward(bit<48> dmac, bit<9> port) {
        h.eth.src = h.eth.dst;
        h.eth.dst = dmac;
        h.ipv4.ttl = h.ipv4.ttl - 1;
        sm.egress_spec = port;
    }
    table ipv4_lpm {
        key = { h.ipv4.dst : lpm; }
        actions = { forward; drop; }
        default_action = drop();
        const entries = {
            0x0a000100 &&& 0xffffff00 : forward(0x000000000101, 1);
            0x0a000200 &&& 0xffffff00 : forward(0x000000000202, 2);
            0x0a000000 &&& 0xff000000 : forward(0x000000000303, 3);
        }
    }
    apply {
        if (h.ipv4.isValid() && h.ipv4.ttl > 1) { ipv4_lpm.apply(); } else { drop(); }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum(h.ipv4.isValid(),
            { h.ipv4.version, h.ipv4.ihl, h.ipv4.tos, h.ipv4.len, h.ipv4.id, h.ipv4.flags, h.ipv4.frag,
              h.ipv4.ttl, h.ipv4.proto, h.ipv4.src, h.ipv4.dst },
            h.ipv4.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.ipv4); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
