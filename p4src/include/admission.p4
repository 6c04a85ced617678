// p4ina: which job a packet belongs to, and whether it may touch that job's slots (isolation). A packet only
// reaches the slot registers if its job is installed, its slot lies inside the job's pool and it comes from an
// admitted (port, job, child) -- or, for a RESULT or a PULL request going down, from the job's parent port.
#ifndef P4INA_ADMISSION_P4
#define P4INA_ADMISSION_P4

#include "headers.p4"

control AggAdmissionIngress(inout headers_t hdr, inout metadata_t meta,
                            inout standard_metadata_t standard_metadata) {
    action reject(bit<8> reason) {
        meta.agg.verdict = VERDICT_DROP;
        meta.agg.drop_reason = reason;
    }

    // Root of the job's tree at this switch: completed slots become RESULTs.
    action set_job_root(bit<8> job_idx, bit<16> slot_base, bit<16> slot_count, bit<8> children,
                        bit<16> mcast_grp, bit<8> scale, bit<2> result_fmt) {
        meta.agg.job_hit = 1;
        meta.agg.job_idx = job_idx;
        meta.agg.slot_base = slot_base;
        meta.agg.slot_count = slot_count;
        meta.agg.children = children;
        meta.agg.is_root = 1;
        meta.agg.mcast_grp = mcast_grp;
        meta.agg.scale = scale;
        meta.agg.result_fmt = result_fmt;
    }

    // Leaf or inner node: completed slots go up to the parent, RESULTs come from it.
    action set_job_member(bit<8> job_idx, bit<16> slot_base, bit<16> slot_count, bit<8> children,
                          bit<16> mcast_grp, bit<8> scale, port_t parent_port, bit<5> my_index) {
        meta.agg.job_hit = 1;
        meta.agg.job_idx = job_idx;
        meta.agg.slot_base = slot_base;
        meta.agg.slot_count = slot_count;
        meta.agg.children = children;
        meta.agg.is_root = 0;
        meta.agg.mcast_grp = mcast_grp;
        meta.agg.scale = scale;
        meta.agg.parent_port = parent_port;
        meta.agg.my_index = my_index;
    }

    table job {
        key = {
            hdr.agg.job_id : exact;
        }
        actions = {
            set_job_root;
            set_job_member;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = JOB_TABLE_SIZE;
    }

    action admit() {
        meta.agg.admitted = 1;
    }

    // One entry per child of the job at this switch: the port it arrives on and its bitmap index.
    table agg_children {
        key = {
            standard_metadata.ingress_port : exact;
            hdr.agg.job_id                 : exact;
            hdr.agg.child                  : exact;
        }
        actions = {
            admit;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = CHILD_TABLE_SIZE;
    }

    apply {
        meta.agg.job_idx = MAX_JOBS;          // the "unknown job" row of the per-job counters
        meta.agg.verdict = VERDICT_ADMITTED;
        job.apply();
        bool has_values = hdr.vals32.isValid() || hdr.vals16.isValid() || hdr.vals8.isValid();
        if (meta.agg.job_hit == 0) {
            reject(DROP_UNKNOWN_JOB);
        } else if (!has_values || standard_metadata.parser_error != error.NoError
                   || standard_metadata.checksum_error == 1) {
            reject(DROP_BAD_FORMAT);
        } else if (hdr.agg.slot >= meta.agg.slot_count) {
            reject(DROP_SLOT_RANGE);
        } else if ((hdr.agg.flags & (FLAG_RESULT | FLAG_PULL)) == FLAG_RESULT
                   || (hdr.agg.flags & (FLAG_RESULT | FLAG_PULL)) == FLAG_PULL) {
            // Down the tree (a RESULT, a PULL request): only from the parent. Up (DATA, partial sums, RESULTs
            // answering a PULL): only from an admitted child.
            if (meta.agg.is_root == 1 || standard_metadata.ingress_port != meta.agg.parent_port) {
                reject(DROP_NOT_ADMITTED);
            }
        } else {
            agg_children.apply();
            if (meta.agg.admitted == 0) {
                reject(DROP_NOT_ADMITTED);
            }
        }
        if (meta.agg.verdict == VERDICT_ADMITTED) {
            // A pool configured past the register arrays must not wrap into another job's slots.
            bit<32> slot = (bit<32>)meta.agg.slot_base + (bit<32>)hdr.agg.slot;
            if (slot >= AGG_SLOTS) {
                reject(DROP_SLOT_RANGE);
            }
            meta.agg.cell = (slot << 1) | (bit<32>)hdr.agg.ver;
        }
    }
}

#endif  // P4INA_ADMISSION_P4
