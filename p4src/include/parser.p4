// p4ina: the parser. Aggregation packets are UDP to AGG_PORT; the value vector's type follows the header's `fmt`.
// A vector of another length than AGG_VALUES (by the UDP length) is a parser error: dropped as BAD_FORMAT.
#ifndef P4INA_PARSER_P4
#define P4INA_PARSER_P4

#include "headers.p4"

parser P4inaParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_MAC_CONTROL: parse_mac_control;
            ETHERTYPE_PFC_PROBE: parse_probe;
            default: accept;
        }
    }

    state parse_mac_control {
        transition select(packet.lookahead<bit<16>>()) {
            PFC_OPCODE: parse_pfc;
            default: accept;
        }
    }

    state parse_probe {
        packet.extract(hdr.probe);
        transition accept;
    }

    state parse_pfc {
        packet.extract(hdr.pfc);
        transition accept;
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_UDP): parse_udp;
            (5, 0, IP_PROTO_TCP): parse_tcp;
            default: accept;
        }
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        meta.fwd.l4_src_port = hdr.tcp.src_port;
        meta.fwd.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.fwd.l4_src_port = hdr.udp.src_port;
        meta.fwd.l4_dst_port = hdr.udp.dst_port;
        transition select(hdr.udp.dst_port) {
            AGG_PORT: parse_agg;
            default: accept;
        }
    }

    state parse_agg {
        packet.extract(hdr.agg);
        transition select(hdr.agg.fmt) {
            FMT_INT32: parse_vals32;
            FMT_INT16: parse_vals16;
            FMT_INT8: parse_vals8;
            default: accept;          // no values: dropped as BAD_FORMAT by the ingress
        }
    }

    state parse_vals32 {
        packet.extract(hdr.vals32);
        verify(hdr.udp.length == UDP_AGG_LEN + VALUES32_BYTES, error.AggValueCount);
        transition accept;
    }

    state parse_vals16 {
        packet.extract(hdr.vals16);
        verify(hdr.udp.length == UDP_AGG_LEN + VALUES16_BYTES, error.AggValueCount);
        transition accept;
    }

    state parse_vals8 {
        packet.extract(hdr.vals8);
        verify(hdr.udp.length == UDP_AGG_LEN + VALUES8_BYTES, error.AggValueCount);
        transition accept;
    }
}

#endif  // P4INA_PARSER_P4
