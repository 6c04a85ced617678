// p4ina: egress addressing of aggregation packets. The same packet (a multicast replica, a unicast reply, a partial
// sum going up) gets the addresses of the neighbour behind its egress port: a worker or another switch.
#ifndef P4INA_REWRITE_P4
#define P4INA_REWRITE_P4

#include "headers.p4"

control AggRewriteEgress(inout headers_t hdr, inout metadata_t meta,
                         inout standard_metadata_t standard_metadata) {
    action set_neighbor(mac_addr_t src_mac, mac_addr_t dst_mac, ipv4_addr_t src_addr, ipv4_addr_t dst_addr,
                        bit<16> dst_port) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.src_addr = src_addr;
        hdr.ipv4.dst_addr = dst_addr;
        hdr.udp.dst_port = dst_port;
    }

    table agg_neighbors {
        key = {
            hdr.agg.job_id                : exact;
            standard_metadata.egress_port : exact;
        }
        actions = {
            set_neighbor;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NEIGHBOR_TABLE_SIZE;
    }

    apply {
        if (hdr.agg.isValid()) {
            agg_neighbors.apply();
            hdr.udp.src_port = AGG_PORT;
            hdr.udp.checksum = 0;
            // The switch may have changed the value format: fix both lengths.
            if (hdr.vals32.isValid()) {
                hdr.ipv4.total_len = IPV4_UDP_AGG_LEN + VALUES32_BYTES;
                hdr.udp.length = UDP_AGG_LEN + VALUES32_BYTES;
            } else if (hdr.vals16.isValid()) {
                hdr.ipv4.total_len = IPV4_UDP_AGG_LEN + VALUES16_BYTES;
                hdr.udp.length = UDP_AGG_LEN + VALUES16_BYTES;
            } else {
                hdr.ipv4.total_len = IPV4_UDP_AGG_LEN + VALUES8_BYTES;
                hdr.udp.length = UDP_AGG_LEN + VALUES8_BYTES;
            }
        }
    }
}

#endif  // P4INA_REWRITE_P4
