// A parser-heavy program (also the fuzzing target of tests/target/test_fuzz_parser.py): Ethernet, up to two
// VLAN tags in a stack, an MPLS label stack read in a loop until bottom-of-stack, IPv4 (version verified),
// IPv6, UDP/TCP, and a lookahead-selected tunnel header. Every packet leaves on exactly one port: 1 for IPv4,
// 2 for IPv6, 3 for anything else, 4 after a parser error; a summary header in front says what was parsed.
#include <core.p4>
#include <v1model.p4>

error { BadIpVersion }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
header vlan_t { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> etype; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header ipv6_t { bit<4> version; bit<8> tc; bit<20> flow; bit<16> len; bit<8> next; bit<8> hops;
                bit<128> src; bit<128> dst; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header tcp_t { bit<16> sport; bit<16> dport; bit<32> seq; bit<32> ack; bit<4> off; bit<4> res; bit<8> flags;
               bit<16> win; bit<16> csum; bit<16> urg; }
header tunnel_t { bit<8> magic; bit<8> kind; bit<16> key; }
header summary_t { bit<8> err; bit<8> vlans; bit<8> labels; bit<8> l3; bit<8> l4; bit<8> tunnel; }

struct headers_t {
    summary_t s; ethernet_t eth; vlan_t[2] vlan; mpls_t[4] mpls; ipv4_t ipv4; ipv6_t ipv6; udp_t udp; tcp_t tcp;
    tunnel_t tun;
}
struct meta_t { bit<16> etype; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        m.etype = h.eth.etype;
        transition dispatch;
    }
    state dispatch {
        transition select(m.etype) {
            0x8100: vlan;
            0x88A8: vlan;
            0x8847: mpls;
            0x0800: ipv4;
            0x86DD: ipv6;
            default: accept;
        }
    }
    state vlan {
        pkt.extract(h.vlan.next);
        m.etype = h.vlan.last.etype;
        transition dispatch;
    }
    state mpls {
        pkt.extract(h.mpls.next);
        transition select(h.mpls.last.bos) {
            1: after_mpls;
            default: mpls;
        }
    }
    state after_mpls {
        transition select(pkt.lookahead<bit<4>>()) {
            4: ipv4;
            6: ipv6;
            default: accept;
        }
    }
    state ipv4 {
        pkt.extract(h.ipv4);
        verify(h.ipv4.version == 4, error.BadIpVersion);
        transition select(h.ipv4.frag, h.ipv4.proto) {
            (0, 17): udp;
            (0, 6): tcp;
            default: accept;
        }
    }
    state ipv6 {
        pkt.extract(h.ipv6);
        transition select(h.ipv6.next) {
            17: udp;
            6: tcp;
            default: accept;
        }
    }
    state udp {
        pkt.extract(h.udp);
        transition select(h.udp.dport) {
            4789 .. 4790: maybe_tunnel;
            default: accept;
        }
    }
    state tcp { pkt.extract(h.tcp); transition accept; }
    state maybe_tunnel {
        transition select(pkt.lookahead<tunnel_t>().magic) {
            0xA5: tunnel;
            default: accept;
        }
    }
    state tunnel { pkt.extract(h.tun); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.s.setValid();
        h.s.err = 0;
        if (sm.parser_error == error.PacketTooShort) { h.s.err = 1; }
        else if (sm.parser_error == error.StackOutOfBounds) { h.s.err = 2; }
        else if (sm.parser_error == error.BadIpVersion) { h.s.err = 3; }
        else if (sm.parser_error != error.NoError) { h.s.err = 9; }
        h.s.vlans = 0;
        if (h.vlan[0].isValid()) { h.s.vlans = h.s.vlans + 1; }
        if (h.vlan[1].isValid()) { h.s.vlans = h.s.vlans + 1; }
        h.s.labels = 0;
        if (h.mpls[0].isValid()) { h.s.labels = h.s.labels + 1; }
        if (h.mpls[1].isValid()) { h.s.labels = h.s.labels + 1; }
        if (h.mpls[2].isValid()) { h.s.labels = h.s.labels + 1; }
        if (h.mpls[3].isValid()) { h.s.labels = h.s.labels + 1; }
        h.s.l3 = h.ipv4.isValid() ? 8w4 : (h.ipv6.isValid() ? 8w6 : 8w0);
        h.s.l4 = h.udp.isValid() ? 8w17 : (h.tcp.isValid() ? 8w6 : 8w0);
        h.s.tunnel = h.tun.isValid() ? h.tun.kind : 8w0;
        if (h.s.err != 0) {
            sm.egress_spec = 4;
        } else if (h.ipv4.isValid()) {
            sm.egress_spec = 1;
            h.ipv4.ttl = h.ipv4.ttl |-| 1;
        } else if (h.ipv6.isValid()) {
            sm.egress_spec = 2;
            h.ipv6.hops = h.ipv6.hops |-| 1;
        } else {
            sm.egress_spec = 3;
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.s); pkt.emit(h.eth); pkt.emit(h.vlan); pkt.emit(h.mpls); pkt.emit(h.ipv4); pkt.emit(h.ipv6);
        pkt.emit(h.udp); pkt.emit(h.tcp); pkt.emit(h.tun);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
