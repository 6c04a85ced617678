/* IPv4 longest-prefix forwarding in the shape of the P4 tutorials' first exercise, written for p4ina's tests:
 * routes.lpm(dst) -> to_next_hop(mac, port) rewrites the MACs, decrements the TTL and recomputes the checksum.
 * A miss and every non-IPv4 frame are dropped (the tests give the hosts static ARP entries). */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
typedef bit<32> ip4_t;
typedef bit<9>  port_t;

const bit<16> ETH_IPV4 = 0x0800;

header eth_h {
    mac_t   dst;
    mac_t   src;
    bit<16> ethertype;
}

header ip4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> total_len;
    bit<16> ident;
    bit<3>  flags;
    bit<13> frag;
    bit<8>  ttl;
    bit<8>  proto;
    bit<16> csum;
    ip4_t   src;
    ip4_t   dst;
}

struct hdrs_t {
    eth_h eth;
    ip4_h ip;
}

struct meta_t { }

parser FwdParser(packet_in pkt, out hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ethertype) {
            ETH_IPV4: ip;
            default: accept;
        }
    }
    state ip {
        pkt.extract(h.ip);
        transition accept;
    }
}

control FwdVerify(inout hdrs_t h, inout meta_t m) {
    apply { }
}

control FwdIngress(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    action discard() {
        mark_to_drop(sm);
    }
    action to_next_hop(mac_t next_mac, port_t out_port) {
        sm.egress_spec = out_port;
        h.eth.src = h.eth.dst;
        h.eth.dst = next_mac;
        h.ip.ttl = h.ip.ttl - 1;
    }
    table routes {
        key = { h.ip.dst : lpm; }
        actions = { to_next_hop; discard; NoAction; }
        size = 256;
        default_action = discard();
    }
    apply {
        if (h.ip.isValid()) {
            routes.apply();
        } else {
            discard();
        }
    }
}

control FwdEgress(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { }
}

control FwdChecksum(inout hdrs_t h, inout meta_t m) {
    apply {
        update_checksum(
            h.ip.isValid(),
            { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.total_len, h.ip.ident, h.ip.flags, h.ip.frag, h.ip.ttl,
              h.ip.proto, h.ip.src, h.ip.dst },
            h.ip.csum,
            HashAlgorithm.csum16);
    }
}

control FwdDeparser(packet_out pkt, in hdrs_t h) {
    apply {
        pkt.emit(h.eth);
        pkt.emit(h.ip);
    }
}

V1Switch(FwdParser(), FwdVerify(), FwdIngress(), FwdEgress(), FwdChecksum(), FwdDeparser()) main;
