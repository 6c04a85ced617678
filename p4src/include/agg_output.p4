// p4ina: what leaves the switch after the aggregation step, and the per-job counters. Drops are counted per job
// and reason in agg_drops[job_idx * DROP_REASONS + reason] (row MAX_JOBS: packets of unknown jobs).
#ifndef P4INA_AGG_OUTPUT_P4
#define P4INA_AGG_OUTPUT_P4

#include "headers.p4"

control AggOutputIngress(inout headers_t hdr, inout metadata_t meta,
                         inout standard_metadata_t standard_metadata) {
    counter(DROP_ROWS, CounterType.packets) agg_drops;
    counter(JOB_ROWS, CounterType.packets_and_bytes) agg_packets;

    action drop_counted() {
        agg_drops.count((bit<32>)meta.agg.job_idx * DROP_REASONS + (bit<32>)meta.agg.drop_reason);
        mark_to_drop(standard_metadata);
    }

    action absorb() {
        mark_to_drop(standard_metadata);
    }

    // The slot's sticky flags travel with everything sent from it.
    action slot_flags(bit<6> base) {
        hdr.agg.flags = base;
        if ((meta.agg.status & STATUS_OVERFLOW) != 0) {
            hdr.agg.flags = hdr.agg.flags | FLAG_OVERFLOW;
        }
        if ((meta.agg.status & STATUS_CORRUPT) != 0) {
            hdr.agg.flags = hdr.agg.flags | FLAG_CORRUPT;
        }
    }

    action to_parent() {
        standard_metadata.egress_spec = meta.agg.parent_port;
        hdr.agg.child = meta.agg.my_index;
    }

    // A RESULT has no sender index: `child` is 0 on the way down.
    action to_children() {
        standard_metadata.mcast_grp = meta.agg.mcast_grp;
        hdr.agg.child = 0;
    }

    action to_sender() {
        standard_metadata.egress_spec = standard_metadata.ingress_port;
        hdr.agg.child = 0;
    }

    // A slot holding a RESULT it received (from the parent, or adopted from a child) answers in that RESULT's
    // format and exponent, kept in the status word.
    action restore_result_format() {
        hdr.agg.fmt = meta.agg.status[5:4];
        hdr.agg.exp = meta.agg.status[15:8];
    }

    apply {
        if (meta.agg.verdict == VERDICT_DROP) {
            drop_counted();
        } else {
            agg_packets.count((bit<32>)meta.agg.job_idx);
            if (meta.agg.verdict == VERDICT_ABSORBED) {
                absorb();
            } else if (meta.agg.verdict == VERDICT_UP) {
                slot_flags(0);
                to_parent();
            } else if (meta.agg.verdict == VERDICT_RESEND_UP) {
                slot_flags(FLAG_RETX);
                to_parent();
            } else if (meta.agg.verdict == VERDICT_DOWN) {
                slot_flags(FLAG_RESULT);
                to_children();
            } else if (meta.agg.verdict == VERDICT_REPLY) {
                slot_flags(FLAG_RESULT);
                if ((meta.agg.status & STATUS_STORED) != 0) {
                    restore_result_format();
                }
                to_sender();
            } else if (meta.agg.verdict == VERDICT_PULL) {
                if ((hdr.agg.flags & FLAG_PULL) != 0) {
                    // answering the parent's PULL with the stored RESULT
                    slot_flags(FLAG_RESULT | FLAG_PULL);
                    restore_result_format();
                    to_parent();
                } else {
                    // asking the child for the RESULT of the round named in the header
                    hdr.agg.flags = FLAG_PULL;
                    to_sender();
                }
            }
        }
    }
}

#endif  // P4INA_AGG_OUTPUT_P4
