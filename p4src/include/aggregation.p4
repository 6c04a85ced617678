// p4ina: the slot state and its update (SwitchML's scheme, extended to trees; docs/protocol.md "Slots and
// versions"). Every register a packet touches is read, modified and written inside ONE action (`update` or
// `store_result`): BMv2 ignores @atomic but serialises the register accesses of a single action.
#ifndef P4INA_AGGREGATION_P4
#define P4INA_AGGREGATION_P4

#include "headers.p4"

#define SLOT_REGISTER(n) register<bit<32>>(AGG_CELLS) agg_v##n;
// Add the packet's element into the slot (the first contribution of a round overwrites: keep == 0), saturating,
// and leave the slot's value in the header (the sum so far, or the stored value for a retransmission).
#define ACCUMULATE(n) {                                              \
        bit<32> t;                                                   \
        agg_v##n.read(t, cell);                                      \
        if (add == 1) {                                              \
            bit<32> base = t & keep;                                 \
            int<32> sat = (int<32>)base |+| (int<32>)hdr.vals32.v##n; \
            if ((bit<32>)sat != base + hdr.vals32.v##n) {            \
                meta.agg.overflow = 1;                               \
            }                                                        \
            t = (bit<32>)sat;                                        \
            agg_v##n.write(cell, t);                                 \
        }                                                            \
        hdr.vals32.v##n = t;                                         \
    }
#define STORE(n) agg_v##n.write(cell, hdr.vals32.v##n);
#define LOAD(n) agg_v##n.read(hdr.vals32.v##n, cell);

control AggregationIngress(inout headers_t hdr, inout metadata_t meta) {
    // Per cell ((slot << 1) | version): children seen, how many, the round's step and seq, the sum of the
    // children's `count`s, the sum of their checksums, STATUS_* bits (+ the stored RESULT's fmt in bits 4-5, exp in
    // bits 8-15).
    // @p4ina_values: the values per packet this build was made for (-D AGG_VALUES), for the controller to read
    // from P4Info (docs/p4-program.md, "Values per packet").
    @p4ina_values(AGG_VALUES) register<bit<32>>(AGG_CELLS) agg_bitmap;
    register<bit<8>>(AGG_CELLS) agg_child_count;
    register<bit<32>>(AGG_CELLS) agg_round_step;
    register<bit<32>>(AGG_CELLS) agg_round_seq;
    register<bit<16>>(AGG_CELLS) agg_contributions;
    register<bit<32>>(AGG_CELLS) agg_checksum;
    register<bit<32>>(AGG_CELLS) agg_status;
    ALL_VALUES(SLOT_REGISTER)

    // A DATA (or a partial sum from a child switch).
    action update() {
        bit<32> cell = meta.agg.cell;
        bit<32> other = cell ^ 1;
        bit<32> me = (bit<32>)1 << hdr.agg.child;
        bit<32> seen;
        agg_bitmap.read(seen, cell);
        bit<32> seen_other;
        agg_bitmap.read(seen_other, other);
        bit<8> count;
        agg_child_count.read(count, cell);
        bit<32> round_step;
        agg_round_step.read(round_step, cell);
        bit<32> round_seq;
        agg_round_seq.read(round_seq, cell);
        bit<16> contributions;
        agg_contributions.read(contributions, cell);
        bit<32> checksum;
        agg_checksum.read(checksum, cell);
        bit<32> status;
        agg_status.read(status, cell);
        bit<32> status_other;
        agg_status.read(status_other, other);
        bit<32> step_other;
        agg_round_step.read(step_other, other);
        bit<32> seq_other;
        agg_round_seq.read(seq_other, other);

        // Which round is this packet of, relative to the slot's round: the same, a newer one (step, then seq,
        // compared in serial-number arithmetic), or an older one (a stale packet, e.g. a late duplicate)?
        bit<32> dstep = hdr.agg.step - round_step;
        bit<32> dseq = hdr.agg.seq - round_seq;
        bit<1> same = 0;
        bit<1> newer = 0;
        if ((status & STATUS_USED) == 0) {
            newer = 1;
        } else if (dstep != 0) {
            newer = (bit<1>)(dstep[31:31] == 0);
        } else if (dseq != 0) {
            newer = (bit<1>)(dseq[31:31] == 0);
        } else {
            same = 1;
        }

        // A child already in a round after the other version's round, while that round has no RESULT here: the
        // child got that RESULT from a parent this switch replaced (a tree rebuild). Ask the child for it (PULL)
        // instead of adding this contribution; the child retransmits it once the old round is settled.
        bit<1> past_other = 0;
        if ((status_other & STATUS_USED) != 0 && (status_other & STATUS_READY) == 0) {
            bit<32> dstep_other = hdr.agg.step - step_other;
            bit<32> dseq_other = hdr.agg.seq - seq_other;
            if (dstep_other != 0) {
                past_other = (bit<1>)(dstep_other[31:31] == 0);
            } else if (dseq_other != 0) {
                past_other = (bit<1>)(dseq_other[31:31] == 0);
            }
        }

        bit<1> add = 0;
        bit<32> keep = 0xffffffff;
        if (past_other == 1) {
            meta.agg.verdict = VERDICT_PULL;
            hdr.agg.ver = ~hdr.agg.ver;
            hdr.agg.step = step_other;
            hdr.agg.seq = seq_other;
        } else if (same == 1 && (seen & me) != 0) {
            // A retransmission: never counted twice.
            if (count != 0) {
                meta.agg.verdict = VERDICT_DROP;
                meta.agg.drop_reason = DROP_DUPLICATE;
            } else if ((status & STATUS_READY) != 0) {
                meta.agg.verdict = VERDICT_REPLY;
            } else {
                meta.agg.verdict = VERDICT_RESEND_UP;
            }
        } else if ((same == 1 && count != 0) || newer == 1) {
            add = 1;
            if (newer == 1) {
                // First contribution of a new round: the previous round's state is overwritten, not reset.
                keep = 0;
                seen = 0;
                count = 0;
                contributions = 0;
                checksum = 0;
                status = STATUS_USED;
            }
            agg_bitmap.write(cell, seen | me);
            agg_bitmap.write(other, seen_other & ~me);
            agg_round_step.write(cell, hdr.agg.step);
            agg_round_seq.write(cell, hdr.agg.seq);
            count = count + 1;
            contributions = contributions + hdr.agg.count;
            checksum = checksum + hdr.agg.csum;
            if ((hdr.agg.flags & FLAG_OVERFLOW) != 0) {
                status = status | STATUS_OVERFLOW;
            }
        } else {
            meta.agg.verdict = VERDICT_DROP;
            meta.agg.drop_reason = DROP_STALE;
        }

        ALL_VALUES(ACCUMULATE)

        if (add == 1) {
            if (meta.agg.overflow == 1) {
                status = status | STATUS_OVERFLOW;
            }
            if (count == meta.agg.children) {
                count = 0;
                if (meta.agg.is_root == 1) {
                    status = status | STATUS_READY;
                    meta.agg.verdict = VERDICT_DOWN;
                } else {
                    meta.agg.verdict = VERDICT_UP;
                }
            } else {
                meta.agg.verdict = VERDICT_ABSORBED;
            }
            agg_child_count.write(cell, count);
            agg_contributions.write(cell, contributions);
            agg_checksum.write(cell, checksum);
            agg_status.write(cell, status);
        }
        hdr.agg.count = contributions;
        hdr.agg.csum = checksum;
        meta.agg.status = status;
    }

    // A RESULT from the parent, or one PULLed from a child (the child holds the RESULT of a round this switch
    // never completed, from a parent before a tree rebuild): kept with the slot (later retransmissions are
    // answered here) and sent down. An adopted RESULT counts every child as seen: it includes them all.
    action store_result() {
        bit<32> cell = meta.agg.cell;
        bit<32> seen;
        agg_bitmap.read(seen, cell);
        bit<8> count;
        agg_child_count.read(count, cell);
        bit<32> round_step;
        agg_round_step.read(round_step, cell);
        bit<32> round_seq;
        agg_round_seq.read(round_seq, cell);
        bit<32> old_status;
        agg_status.read(old_status, cell);
        bool ours = round_step == hdr.agg.step && round_seq == hdr.agg.seq;
        if ((hdr.agg.flags & FLAG_PULL) != 0) {
            // Adopt into this round while it has no RESULT (a second answer is a duplicate), or over an older
            // round (the child answered with a later round than the abandoned one this cell held).
            bit<32> dstep = hdr.agg.step - round_step;
            bit<32> dseq = hdr.agg.seq - round_seq;
            bool newer = (old_status & STATUS_USED) == 0;
            if (dstep != 0) {
                newer = newer || dstep[31:31] == 0;
            } else if (dseq != 0) {
                newer = newer || dseq[31:31] == 0;
            }
            if (ours && (old_status & STATUS_READY) != 0) {
                ours = false;
                meta.agg.drop_reason = DROP_DUPLICATE;
            } else {
                ours = ours || newer;
                meta.agg.drop_reason = DROP_STALE;
            }
            seen = 0xffffffff;
        } else {
            ours = ours && seen != 0 && count == 0;
            meta.agg.drop_reason = DROP_STALE;
        }
        if (!ours) {
            // Not the RESULT of this slot's current, locally complete (or, adopted: unanswered) round.
            meta.agg.verdict = VERDICT_DROP;
        } else {
            agg_bitmap.write(cell, seen);
            agg_child_count.write(cell, 0);
            agg_round_step.write(cell, hdr.agg.step);
            agg_round_seq.write(cell, hdr.agg.seq);
            bit<32> status = STATUS_USED | STATUS_READY | STATUS_STORED | ((bit<32>)hdr.agg.fmt << 4)
                             | ((bit<32>)hdr.agg.exp << 8);
            if ((hdr.agg.flags & FLAG_OVERFLOW) != 0) {
                status = status | STATUS_OVERFLOW;
            }
            if ((hdr.agg.flags & FLAG_CORRUPT) != 0) {
                status = status | STATUS_CORRUPT;
            }
            agg_status.write(cell, status);
            agg_contributions.write(cell, hdr.agg.count);
            agg_checksum.write(cell, hdr.agg.csum);
            ALL_VALUES(STORE)
            meta.agg.status = status;
            meta.agg.verdict = VERDICT_DOWN;
        }
    }

    // A PULL from the parent names a round (slot, ver, step, seq): answer with the RESULT stored for it, or for
    // a later round of that cell (the parent's round was abandoned; the later RESULT settles the cell as well).
    action answer_pull() {
        bit<32> cell = meta.agg.cell;
        bit<32> status;
        agg_status.read(status, cell);
        bit<32> round_step;
        agg_round_step.read(round_step, cell);
        bit<32> round_seq;
        agg_round_seq.read(round_seq, cell);
        bit<16> contributions;
        agg_contributions.read(contributions, cell);
        bit<32> checksum;
        agg_checksum.read(checksum, cell);
        bit<32> dstep = round_step - hdr.agg.step;
        bit<32> dseq = round_seq - hdr.agg.seq;
        bool later_or_same = dseq[31:31] == 0;
        if (dstep != 0) {
            later_or_same = dstep[31:31] == 0;
        }
        if ((status & STATUS_STORED) != 0 && (status & STATUS_READY) != 0 && later_or_same) {
            ALL_VALUES(LOAD)
            hdr.agg.step = round_step;
            hdr.agg.seq = round_seq;
            hdr.agg.count = contributions;
            hdr.agg.csum = checksum;
            meta.agg.status = status;
            meta.agg.verdict = VERDICT_PULL;
        } else {
            meta.agg.verdict = VERDICT_DROP;
            meta.agg.drop_reason = DROP_STALE;
        }
    }

    apply {
        if (meta.agg.verdict == VERDICT_ADMITTED) {
            if ((hdr.agg.flags & FLAG_RESULT) != 0) {
                store_result();
            } else if ((hdr.agg.flags & FLAG_PULL) != 0) {
                answer_pull();
            } else {
                update();
            }
        }
    }
}

#endif  // P4INA_AGGREGATION_P4
