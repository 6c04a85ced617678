// p4ina: constants and sizes shared by every part of the program. Sizes are #defines so that a build can resize
// the register arrays (e.g. -DAGG_SLOTS=4096) without touching the code.
#ifndef P4INA_DEFINES_P4
#define P4INA_DEFINES_P4

// ---- sizes ----------------------------------------------------------------------------------------------------
#ifndef AGG_SLOTS
#define AGG_SLOTS 512            // aggregation slots per switch, shared by all jobs (each job owns a range)
#endif
#define AGG_CELLS (2 * AGG_SLOTS) // register cells per value array: 2 versions per slot
#ifndef MAX_JOBS
#define MAX_JOBS 16              // job indices 0..MAX_JOBS-1 (the controller maps job ids to indices)
#endif
#define DROP_REASONS 8           // rows of agg_drops per job
#define DROP_ROWS ((MAX_JOBS + 1) * DROP_REASONS)  // one more row set for packets of unknown jobs
#define JOB_ROWS (MAX_JOBS + 1)
#define NUM_PORTS 512            // 9-bit port space (per-port counters)
#define JOB_TABLE_SIZE 1024
#define CHILD_TABLE_SIZE 4096
#define NEIGHBOR_TABLE_SIZE 4096
#define LPM_TABLE_SIZE 4096
#define ECMP_TABLE_SIZE 1024
#define L2_TABLE_SIZE 4096

// ---- protocol constants (docs/protocol.md) --------------------------------------------------------------------
#define AGG_PORT 0xBEE0
const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;   // IEEE 802.3 MAC control: PAUSE and 802.1Qbb PFC
const bit<16> PFC_OPCODE = 0x0101;
const bit<48> PFC_DEST_MAC = 0x0180c2000001;   // the MAC control multicast address every PAUSE/PFC frame goes to
const bit<16> ETHERTYPE_PFC_PROBE = 0x88B5;     // IEEE local experimental: p4ina deadlock probes (docs/pfc.md)
const bit<8> IP_PROTO_TCP = 6;
const bit<8> IP_PROTO_UDP = 17;

const bit<2> FMT_INT32 = 0;
const bit<2> FMT_INT16 = 1;
const bit<2> FMT_INT8 = 2;

const bit<6> FLAG_RESULT = 0x01;
const bit<6> FLAG_RETX = 0x02;
const bit<6> FLAG_OVERFLOW = 0x04;
const bit<6> FLAG_CORRUPT = 0x08;
const bit<6> FLAG_PULL = 0x10;     // tree rebuilds: a request for a stored RESULT, or (with RESULT) its answer

// Header lengths for the length fields of packets whose value format the switch changes.
const bit<16> IPV4_UDP_AGG_LEN = 52;            // IPv4 (20) + UDP (8) + aggregation header (24)
const bit<16> UDP_AGG_LEN = 32;                 // UDP (8) + aggregation header (24)

// ---- drop reasons (column of agg_drops; docs/p4-program.md) ----------------------------------------------------
const bit<8> DROP_UNKNOWN_JOB = 0;    // no `job` entry for the packet's job id
const bit<8> DROP_NOT_ADMITTED = 1;   // (ingress port, job, child) not admitted, or a RESULT not from the parent
const bit<8> DROP_SLOT_RANGE = 2;     // slot index outside the job's pool
const bit<8> DROP_BAD_FORMAT = 3;     // fmt 3, truncated packet, bad IPv4 checksum, or exponent below the job's scale
const bit<8> DROP_DUPLICATE = 4;      // retransmission to a slot that is not complete yet (harmless)
const bit<8> DROP_STALE = 5;          // packet of an older round than the slot's (a late duplicate)

// ---- what the aggregation step decided (agg_meta_t.verdict) ----------------------------------------------------
const bit<3> VERDICT_DROP = 0;        // dropped; reason in drop_reason
const bit<3> VERDICT_ABSORBED = 1;    // added to the slot, slot not complete: nothing to send
const bit<3> VERDICT_UP = 2;          // slot complete at a non-root: send the partial sum to the parent
const bit<3> VERDICT_DOWN = 3;        // a RESULT to multicast to all children (root completion or parent's RESULT)
const bit<3> VERDICT_REPLY = 4;       // retransmission to a completed slot: unicast the stored RESULT back
const bit<3> VERDICT_RESEND_UP = 5;   // retransmission to a slot complete here but without RESULT: resend upwards
const bit<3> VERDICT_ADMITTED = 6;    // passed admission, not processed yet
const bit<3> VERDICT_PULL = 7;        // PULL a RESULT from the sender (a DATA/partial), or answer a PULL upwards

const bit<32> INT32_MAX = 0x7fffffff;
const bit<32> INT32_MIN = 0x80000000;

// Slot status register bits.
const bit<32> STATUS_READY = 0x1;     // the slot holds the RESULT of its round
const bit<32> STATUS_OVERFLOW = 0x2;  // some element saturated in this round
const bit<32> STATUS_CORRUPT = 0x4;   // the RESULT from the parent carried CORRUPT
const bit<32> STATUS_USED = 0x8;      // the cell has held a round (its step/seq are meaningful)
const bit<32> STATUS_STORED = 0x40;   // the values are a RESULT received (fmt in bits 4-5, exp in 8-15), not own sums

// ---- PFC, watchdog and deadlock probes (docs/pfc.md) ---------------------------------------------------------
#define PFC_CLASSES 8
#define PFC_ROWS (NUM_PORTS * PFC_CLASSES)       // per (port, class) state: index port * 8 + class
#define PFC_SESSION_BASE 256                     // clone session 256 + p sends generated PFC out of port p (p < 256)
#define PROBE_MAX_HOPS 8
const bit<2> WD_ACTION_DROP = 0;                 // SONiC PFCWD actions (P4inaIngress.pfc.pfcwd_action)
// WD_ACTION_FORWARD is 1: no constant, as nothing in the program tests for it (p4c warns on unused constants).
const bit<2> WD_ACTION_ALERT = 2;
const bit<8> PFC_EVENT_STORM = 1;                // pfc_event_t.kind
const bit<8> PFC_EVENT_RESTORE = 2;
const bit<8> PFC_EVENT_DEADLOCK = 3;
const bit<2> PFC_GEN_NONE = 0;                   // pfc_meta_t.gen
const bit<2> PFC_GEN_XOFF = 1;
const bit<2> PFC_GEN_XON = 2;
const bit<2> PFC_GEN_PROBE = 3;
const bit<8> FL_PFC_GEN = 1;                     // @field_list of the E2E clone that becomes a PFC frame
const bit<8> FL_PFC_HOLD = 2;                    // @field_list of a packet held by recirculation (BMv2 pause)

typedef bit<9> port_t;
typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

// ---- the value vector: AGG_VALUES elements per packet (docs/protocol.md) -------------------------------------
// A build parameter (-D AGG_VALUES=N). Element i is named in octal, zero-padded to the digits N - 1 needs (at
// least two): v00..v77 for 64, v000..v377 for 256, v0000..v3777 for 2048. M(n) is applied to every element by
// ALL_VALUES(M); B(p) to every block of (up to) 64 elements by ALL_BLOCKS(B), with BLOCK(M, p) its elements:
// sums over the vector are one independent expression per block and one over the blocks, never a running sum
// (p4c's BMv2 JSON grows about N^2.8 with a running reduction inside one action).
#ifndef AGG_VALUES
#define AGG_VALUES 64
#endif
#define ROW8(M, r) M(r##0) M(r##1) M(r##2) M(r##3) M(r##4) M(r##5) M(r##6) M(r##7)
#define ROW64(M, r) ROW8(M, r##0) ROW8(M, r##1) ROW8(M, r##2) ROW8(M, r##3) \
                    ROW8(M, r##4) ROW8(M, r##5) ROW8(M, r##6) ROW8(M, r##7)
#define ROW512(M, r) ROW64(M, r##0) ROW64(M, r##1) ROW64(M, r##2) ROW64(M, r##3) \
                     ROW64(M, r##4) ROW64(M, r##5) ROW64(M, r##6) ROW64(M, r##7)
#define ALL32(M) ROW8(M, 0) ROW8(M, 1) ROW8(M, 2) ROW8(M, 3)
#define ALL64(M) ROW8(M, 0) ROW8(M, 1) ROW8(M, 2) ROW8(M, 3) ROW8(M, 4) ROW8(M, 5) ROW8(M, 6) ROW8(M, 7)
#define ALL128(M) ROW64(M, 0) ROW64(M, 1)
#define ALL256(M) ROW64(M, 0) ROW64(M, 1) ROW64(M, 2) ROW64(M, 3)
#define ALL512(M) ROW64(M, 0) ROW64(M, 1) ROW64(M, 2) ROW64(M, 3) ROW64(M, 4) ROW64(M, 5) ROW64(M, 6) ROW64(M, 7)
#define ALL1024(M) ROW512(M, 0) ROW512(M, 1)
#define ALL2048(M) ROW512(M, 0) ROW512(M, 1) ROW512(M, 2) ROW512(M, 3)
// Blocks of 64 named by their leading digits (b0, b1, ... for 3-digit names; b00 .. b37 for 4-digit names).
#define BLOCKS8(B, r) B(r##0) B(r##1) B(r##2) B(r##3) B(r##4) B(r##5) B(r##6) B(r##7)
#if AGG_VALUES == 32
#define ALL_VALUES(M) ALL32(M)
#define ALL_BLOCKS(B) B(0)
#define BLOCK(M, p) ALL32(M)
#elif AGG_VALUES == 64
#define ALL_VALUES(M) ALL64(M)
#define ALL_BLOCKS(B) B(0)
#define BLOCK(M, p) ALL64(M)
#elif AGG_VALUES == 128
#define ALL_VALUES(M) ALL128(M)
#define ALL_BLOCKS(B) B(0) B(1)
#define BLOCK(M, p) ROW64(M, p)
#elif AGG_VALUES == 256
#define ALL_VALUES(M) ALL256(M)
#define ALL_BLOCKS(B) B(0) B(1) B(2) B(3)
#define BLOCK(M, p) ROW64(M, p)
#elif AGG_VALUES == 512
#define ALL_VALUES(M) ALL512(M)
#define ALL_BLOCKS(B) B(0) B(1) B(2) B(3) B(4) B(5) B(6) B(7)
#define BLOCK(M, p) ROW64(M, p)
#elif AGG_VALUES == 1024
#define ALL_VALUES(M) ALL1024(M)
#define ALL_BLOCKS(B) BLOCKS8(B, 0) BLOCKS8(B, 1)
#define BLOCK(M, p) ROW64(M, p)
#elif AGG_VALUES == 2048
#define ALL_VALUES(M) ALL2048(M)
#define ALL_BLOCKS(B) BLOCKS8(B, 0) BLOCKS8(B, 1) BLOCKS8(B, 2) BLOCKS8(B, 3)
#define BLOCK(M, p) ROW64(M, p)
#else
#error "AGG_VALUES must be one of 32, 64, 128, 256, 512, 1024, 2048"
#endif
#define VALUES32_BYTES (4 * AGG_VALUES)   // bytes of the vector in each format
#define VALUES16_BYTES (2 * AGG_VALUES)
#define VALUES8_BYTES AGG_VALUES

#endif  // P4INA_DEFINES_P4
