// p4ina: headers and metadata. The aggregation header and the value vectors are the byte layout of
// docs/protocol.md (hostagent/protocol.py declares the same layout for the hosts).
#ifndef P4INA_HEADERS_P4
#define P4INA_HEADERS_P4

#include "defines.p4"

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16> ether_type;
}

// IEEE 802.1Qbb priority flow control frame (MAC control opcode 0x0101): parsed and counted now; the pause
// machinery (Xoff/Xon, watchdog) builds on this header.
header pfc_t {
    bit<16> opcode;
    bit<8> reserved;
    bit<8> class_enable;     // bit i: the frame carries a pause time for priority i
    bit<16> time0;
    bit<16> time1;
    bit<16> time2;
    bit<16> time3;
    bit<16> time4;
    bit<16> time5;
    bit<16> time6;
    bit<16> time7;
}

header ipv4_t {
    bit<4> version;
    bit<4> ihl;
    bit<6> dscp;
    bit<2> ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4> data_offset;
    bit<4> res;
    bit<8> flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

// The aggregation header (24 bytes).
header agg_t {
    bit<16> job_id;
    bit<16> slot;         // index inside the job's slot pool
    bit<2> fmt;           // FMT_INT32 / FMT_INT16 / FMT_INT8
    bit<6> flags;         // FLAG_RESULT | FLAG_RETX | FLAG_OVERFLOW | FLAG_CORRUPT
    bit<1> ver;           // slot version (set bit)
    bit<2> rsvd0;
    bit<5> child;         // the sender's index at this tree level (its bitmap bit)
    bit<8> exp;           // signed block-floating-point exponent (read as int<8>)
    bit<8> rsvd;
    bit<16> count;        // worker contributions summed into this packet
    bit<16> rsvd2;
    bit<32> seq;          // chunk sequence number
    bit<32> step;         // training step
    bit<32> csum;         // sum of the values mod 2^32
}

#define FIELD32(n) bit<32> v##n;
#define FIELD16(n) bit<16> v##n;
#define FIELD8(n) bit<8> v##n;
header vals32_t { ALL64(FIELD32) }   // 64 x int32 (two's complement)
header vals16_t { ALL64(FIELD16) }   // 64 x int16
header vals8_t { ALL64(FIELD8) }     // 64 x int8

struct headers_t {
    ethernet_t ethernet;
    pfc_t pfc;
    ipv4_t ipv4;
    udp_t udp;
    tcp_t tcp;
    agg_t agg;
    vals32_t vals32;
    vals16_t vals16;
    vals8_t vals8;
}

// Per-packet state of the aggregation pipeline, filled from the `job` table and the slot registers.
struct agg_meta_t {
    bit<1> job_hit;
    bit<8> job_idx;        // row of the per-job counters
    bit<16> slot_base;
    bit<16> slot_count;
    bit<8> children;       // children expected per slot at this switch
    bit<1> is_root;
    bit<16> mcast_grp;     // multicast group of the children
    port_t parent_port;
    bit<5> my_index;       // this switch's child index at its parent
    bit<8> scale;          // int<8>: the job's scale exponent E (sums are in units of 2^E)
    bit<2> result_fmt;     // format of RESULTs sent down (root only)
    bit<1> admitted;
    bit<32> cell;          // register index: ((slot_base + slot) << 1) | ver
    bit<8> drop_reason;
    bit<3> verdict;
    bit<1> overflow;       // saturation while aligning or summing this packet
    bit<32> status;        // slot status after the update (STATUS_*)
    bit<2> out_fmt;        // format of the packet leaving
    bit<8> out_exp;        // int<8>: its exponent
    bit<8> shift;          // right shift applied when narrowing
    bit<32> magnitude;     // OR of the magnitudes of the 64 sums
    bit<8> msb;            // most significant bit of `magnitude`
    bit<1> msb_hit;
}

struct fwd_meta_t {
    bit<16> ecmp_group;
    bit<16> ecmp_size;
    bit<16> ecmp_member;
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
}

struct metadata_t {
    agg_meta_t agg;
    fwd_meta_t fwd;
}

#endif  // P4INA_HEADERS_P4
