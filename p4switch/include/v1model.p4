/* p4ina: the v1model architecture (the P4_16 model of BMv2's simple_switch).
 *
 * Written for the p4ina embedded target from the v1model architecture as p4c defines it in p4include/v1model.p4:
 * names, declaration order, signatures, annotations, the fields of standard_metadata_t (in their order) and the
 * members of every enum (in their order) are the same, because P4Info names and ids, field offsets and hash
 * algorithm codes are derived from them. Comments describe behaviour as the embedded switch implements it
 * (BMv2's semantics).
 *
 * V1MODEL_VERSION selects the API generation as in p4c: 20180101 (the default) indexes counters, meters and
 * registers with bit<32>; 20200408 and later makes the index type a type parameter and adds PortId_t.
 */

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

#include "core.p4"

match_kind {
    range,      /* lo <= key <= hi */
    optional,   /* exact, or anything */
    selector    /* hash input of an action selector */
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9>  PortId_t;
#endif

/* Per-packet metadata owned by the architecture. Port 511 as egress_spec means "drop". */
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;
    PortId_t egress_spec;
    PortId_t egress_port;
#else
    bit<9>  ingress_port;       /* port the packet arrived on */
    bit<9>  egress_spec;        /* set in ingress: output port (511 drops) */
    bit<9>  egress_port;        /* in egress: the port this copy leaves on */
#endif
    bit<32> instance_type;      /* 0 normal, 1 ingress clone, 2 egress clone, 3 coalesced, 4 recirculated,
                                   5 replicated (multicast), 6 resubmitted */
    bit<32> packet_length;      /* bytes, as received */
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;      /* microseconds, when the packet entered the egress queue */
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;         /* queue depth (packets) at enqueue */
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;      /* microseconds spent queued */
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;         /* queue depth (packets) at dequeue */
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;          /* set in ingress: multicast group (0 = none) */
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;         /* in egress: replication id of this multicast copy */
    bit<1>  checksum_error;     /* 1 when verify_checksum found a mismatch */
    error   parser_error;       /* error.NoError unless the parser failed */
    @alias("intrinsic_metadata.priority")
    bit<3>  priority;           /* egress queue priority (with priority queues) */
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* An array of counters, indexed from the data plane; an index out of range updates nothing. */
extern counter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    counter(bit<32> size, CounterType type);
#if V1MODEL_VERSION >= 20200408
    void count(in I index);
#else
    void count(in bit<32> index);
#endif
}

/* A counter per entry of the one table that names it in its `counters` property; counts every hit. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/* An array of two-rate three-color meters (RFC 2698). */
extern meter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    meter(bit<32> size, MeterType type);
#if V1MODEL_VERSION >= 20200408
    void execute_meter<T>(in I index, out T result);
#else
    void execute_meter<T>(in bit<32> index, out T result);
#endif
}

/* A meter per entry of the one table that names it in its `meters` property. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An array of values kept across packets, read and written from the data plane. */
extern register<T
#if V1MODEL_VERSION >= 20200408
               , I
#endif
               >
{
    register(bit<32> size);
    @noSideEffects
#if V1MODEL_VERSION >= 20200408
    void read(out T result, in I index);
    void write(in I index, in T value);
#else
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
#endif
}

/* Table implementation: action data shared between entries. */
extern action_profile {
    action_profile(bit<32> size);
}

/* A random value in [lo, hi] (inclusive). */
extern void random<T>(out T result, in T lo, in T hi);

/* Send data to the control plane; a named struct type gives the digest its P4Info name. */
extern void digest<T>(in bit<32> receiver, in T data);

/* Hash algorithms, in BMv2's order. */
enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/* Drop the packet: egress_spec = 511 and mcast_grp = 0. Later code may still change either. */
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result = base + (H(data) mod max) when max >= 1, else base. */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* Table implementation: an action profile whose member is chosen by a hash of the selector keys. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/* In the VerifyChecksum control: if condition holds and checksum differs from the checksum of data, set
 * standard_metadata.checksum_error. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* In the ComputeChecksum control: if condition holds, checksum = the checksum of data. */
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* As above, with the unparsed payload appended to data. */
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Request a copy of the packet to the clone session's port at the end of this pipeline. */
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
/* From ingress: run ingress again on the original packet, keeping the user metadata fields tagged
 * @field_list(index). */
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);
/* From egress: send the deparsed packet back to the parser, keeping the fields tagged @field_list(index). */
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
/* clone(), keeping the user metadata fields tagged @field_list(index) in the copy. */
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* Cut the emitted packet to at most length bytes. */
extern void truncate(in bit<32> length);

/* A false check is a fatal packet-processing error (BMv2 reports it and stops). */
extern void assert(in bool check);
/* Like assert for the switch; a hint for formal tools. */
extern void assume(in bool check);

/* Log a message; {} placeholders in msg are replaced by the fields of data. */
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The architecture: six programmable blocks in this order. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep
                       );

#endif  /* _V1_MODEL_P4_ */
