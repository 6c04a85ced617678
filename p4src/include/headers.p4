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

// IEEE 802.1Qbb priority flow control frame (MAC control opcode 0x0101; docs/pfc.md). The class-enable vector is
// 16 bits on the wire; its upper octet (`reserved`) must be zero.
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

// Padding of a generated PFC frame to the 60-byte minimum (14 + 20 + 26; the FCS is the MAC's).
header pfc_pad_t {
    bit<208> zeros;
}

// Deadlock probe (EtherType 0x88B5): sent out of a port paused past the deadlock threshold, forwarded by each
// switch out of its own paused port of that class; `path` holds one 32-bit hop (switch id << 16 | egress port) per
// switch visited, the newest in the low bits.
header pfc_probe_t {
    bit<16> origin;          // switch id of the switch that sent it
    bit<8> cls;              // the paused priority
    bit<8> hops;             // entries used in `path`
    bit<256> path;
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
header vals32_t { ALL_VALUES(FIELD32) }   // AGG_VALUES x int32 (two's complement)
header vals16_t { ALL_VALUES(FIELD16) }   // AGG_VALUES x int16
header vals8_t { ALL_VALUES(FIELD8) }     // AGG_VALUES x int8

// A packet whose UDP length is not that of AGG_VALUES values in its format (a sender built for another N).
error { AggValueCount }

// One partial result per block of 64 values (checksums, magnitude): sums over the vector go through these.
#define BLOCK_FIELD(p) bit<32> b##p;
struct agg_blocks_t { ALL_BLOCKS(BLOCK_FIELD) }

struct headers_t {
    ethernet_t ethernet;
    pfc_t pfc;
    pfc_pad_t pfc_pad;
    pfc_probe_t probe;
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
    bit<32> magnitude;     // OR of the magnitudes of the AGG_VALUES sums
    bit<8> msb;            // most significant bit of `magnitude`
    bit<1> msb_hit;
    agg_blocks_t block;    // per-block partial sums / magnitudes
}

struct fwd_meta_t {
    bit<16> ecmp_group;
    bit<16> ecmp_size;
    bit<16> ecmp_member;
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
}

// PFC state of one packet (what must survive a clone or a recirculation is in metadata_t).
struct pfc_meta_t {
    bit<3> cls;                             // traffic class = standard_metadata.priority after qos
    bit<1> hold;                            // set in ingress: recirculate in egress instead of sending
    bit<1> paused;                          // the packet's (egress port, class) is paused now
    bit<8> ev_kind;                         // PFC_EVENT_* to report at the end of ingress (0: none)
    bit<8> ev_classes;                      // bitmap of the classes concerned
    bit<16> ev_port;
    bit<8> ev_hops;
    bit<256> ev_path;
    bit<8> probe_classes;                   // classes whose pause crossed the deadlock threshold in this frame
    port_t cfg_port;                        // key of pfc_port: the port a pause came in on, or a packet goes out of
    port_t gen_port;                        // egress: where the generated PFC frame goes
    bit<16> switch_id;
    bit<3> probe_prio;
    bit<32> quantum_x65536;                 // one pause quantum in us * 65536 at this port's speed
    bit<32> detect_us;
    bit<32> restore_us;
    bit<32> deadlock_us;
    bit<32> probe_interval_us;
    bit<2> wd_action;
    bit<16> hold_limit;
    bit<16> backlog_xoff;                   // packets reaching a paused queue before its senders are paused
    bit<16> backlog_quanta;
}

// The one digest: storms, restorations and deadlocks (docs/pfc.md).
struct pfc_event_t {
    bit<8> kind;              // PFC_EVENT_STORM / _RESTORE / _DEADLOCK
    bit<16> switch_id;
    bit<16> port;             // storm/restore: the paused port; deadlock: the origin's paused port
    bit<8> classes;           // bitmap of the classes concerned
    bit<8> hops;              // deadlock: switches in the cycle
    bit<256> path;            // deadlock: the probe's hops (switch id << 16 | egress port), newest lowest
}

// Fields with @field_list survive the E2E clone that becomes a PFC frame (1) or the recirculation that holds a
// packet for a paused queue on targets without pause in the MAC (2). They are top-level fields: the embedded
// compiler preserves top-level metadata fields only (p4c also accepts nested ones).
struct metadata_t {
    agg_meta_t agg;
    fwd_meta_t fwd;
    pfc_meta_t pfc;
    @field_list(1) bit<2> pfc_gen;              // PFC_GEN_*: what the clone becomes
    @field_list(1) bit<3> pfc_gen_cls;
    @field_list(1) bit<16> pfc_gen_quanta;
    @field_list(1) bit<16> pfc_gen_origin;      // a probe's origin (this switch's id)
    @field_list(2) bit<1> pfc_held;             // a held packet coming back: send it out of hold_port at hold_cls
    @field_list(2) port_t pfc_hold_port;
    @field_list(2) bit<3> pfc_hold_cls;
    @field_list(2) bit<16> pfc_hold_budget;     // recirculations left
    @field_list(2) port_t pfc_hold_in_port;     // the held packet's real ingress port (for PFC generation)
}

#endif  // P4INA_HEADERS_P4
