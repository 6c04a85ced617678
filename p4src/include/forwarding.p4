// p4ina: forwarding of ordinary traffic. IPv4 longest-prefix match to a next hop, or to an ECMP group whose member
// is chosen by a hash of the 5-tuple (per flow) or at random (per-packet spraying across equal-cost uplinks);
// L2 by destination MAC for what is not routed.
#ifndef P4INA_FORWARDING_P4
#define P4INA_FORWARDING_P4

#include "headers.p4"

control ForwardingIngress(inout headers_t hdr, inout metadata_t meta,
                          inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets) fwd_drops;   // per ingress port: no route, TTL expired, bad checksum

    action drop() {
        fwd_drops.count((bit<32>)standard_metadata.ingress_port);
        mark_to_drop(standard_metadata);
    }

    action route(port_t port, mac_addr_t src_mac, mac_addr_t dst_mac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    // Per-flow ECMP: every packet of a flow takes the same member.
    action route_ecmp(bit<16> group, bit<16> size) {
        meta.fwd.ecmp_group = group;
        meta.fwd.ecmp_size = size;
        hash(meta.fwd.ecmp_member, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, meta.fwd.l4_src_port, meta.fwd.l4_dst_port },
             size);
    }

    // Per-packet spraying: each packet takes a random member (receivers must tolerate reordering).
    action route_spray(bit<16> group, bit<16> size) {
        meta.fwd.ecmp_group = group;
        meta.fwd.ecmp_size = size;
        random(meta.fwd.ecmp_member, (bit<16>)0, size - 1);
    }

    table ipv4_lpm {
        key = {
            hdr.ipv4.dst_addr : lpm;
        }
        actions = {
            route;
            route_ecmp;
            route_spray;
            drop;
            NoAction;
        }
        default_action = NoAction();
        size = LPM_TABLE_SIZE;
    }

    table ecmp_members {
        key = {
            meta.fwd.ecmp_group  : exact;
            meta.fwd.ecmp_member : exact;
        }
        actions = {
            route;
            @defaultonly drop;
        }
        const default_action = drop();
        size = ECMP_TABLE_SIZE;
    }

    action l2_forward(port_t port) {
        standard_metadata.egress_spec = port;
    }

    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }

    table l2 {
        key = {
            hdr.ethernet.dst_addr : exact;
        }
        actions = {
            l2_forward;
            flood;
            drop;
        }
        default_action = drop();
        size = L2_TABLE_SIZE;
    }

    apply {
        // One apply() call site per table: BMv2 JSON cannot express a table applied twice (p4lang/p4c#457).
        bool to_l2 = true;
        if (hdr.ipv4.isValid()) {
            bit<8> ttl_in = hdr.ipv4.ttl;
            if (standard_metadata.checksum_error == 1) {
                drop();
                to_l2 = false;
            } else if (ipv4_lpm.apply().hit) {
                to_l2 = false;
                if (meta.fwd.ecmp_size != 0) {
                    ecmp_members.apply();
                }
                if (ttl_in <= 1) {
                    drop();
                }
            }
        }
        if (to_l2) {
            l2.apply();
        }
    }
}

#endif  // P4INA_FORWARDING_P4
