// p4ina: in-switch quantization (docs/protocol.md, "Quantization").
// - AggWidenIngress: every aggregation packet is turned into AGG_VALUES x int32 in hdr.vals32. A DATA is also aligned to
//   the job's scale E (shift left by exp - E, saturating), so all sums of a job share one fixed-point scale.
// - AggNarrowIngress: what leaves in a narrow format is narrowed again. At the root the shift comes from the data:
//   the OR of the magnitudes of the AGG_VALUES sums and a ternary table for its most significant bit.
#ifndef P4INA_QUANTIZATION_P4
#define P4INA_QUANTIZATION_P4

#include "headers.p4"
#include "checksum.p4"

#define WIDEN16(n) hdr.vals32.v##n = (bit<32>)(int<32>)(int<16>)hdr.vals16.v##n;
#define WIDEN8(n) hdr.vals32.v##n = (bit<32>)(int<32>)(int<8>)hdr.vals8.v##n;
// x << d must shift back to x, otherwise the element does not fit int32: clamp it and flag the overflow.
#define ALIGN(n) {                                                   \
        int<32> x = (int<32>)hdr.vals32.v##n;                        \
        int<32> y = x << d;                                          \
        if ((y >> d) != x) {                                         \
            meta.agg.overflow = 1;                                   \
            if (x < 0) { y = (int<32>)INT32_MIN; } else { y = (int<32>)INT32_MAX; } \
        }                                                            \
        hdr.vals32.v##n = (bit<32>)y;                                \
    }

control AggWidenIngress(inout headers_t hdr, inout metadata_t meta) {
    action widen16() {
        hdr.vals32.setValid();
        ALL_VALUES(WIDEN16)
        hdr.vals16.setInvalid();
    }

    action widen8() {
        hdr.vals32.setValid();
        ALL_VALUES(WIDEN8)
        hdr.vals8.setInvalid();
    }

    // Multiply by 2^d (mod 2^32 for the checksum, which stays exact; saturating for the values).
    action align(bit<8> d) {
        ALL_VALUES(ALIGN)
        hdr.agg.csum = hdr.agg.csum << d;
    }

    apply {
        if (meta.agg.verdict == VERDICT_ADMITTED) {
            if (hdr.vals16.isValid()) {
                widen16();
            } else if (hdr.vals8.isValid()) {
                widen8();
            }
            if ((hdr.agg.flags & FLAG_RESULT) == 0) {
                int<16> d = (int<16>)(int<8>)hdr.agg.exp - (int<16>)(int<8>)meta.agg.scale;
                if (d < 0) {
                    meta.agg.verdict = VERDICT_DROP;
                    meta.agg.drop_reason = DROP_BAD_FORMAT;
                } else {
                    if (d != 0) {
                        align((bit<8>)(bit<16>)d);
                    }
                    hdr.agg.exp = meta.agg.scale;
                    hdr.agg.fmt = FMT_INT32;
                }
            }
        }
    }
}

// The magnitude of x is x for x >= 0 and ~x below: x ^ (x >> 31, arithmetic). One OR expression per block of 64.
#define MAGTERM(n) (hdr.vals32.v##n ^ (bit<32>)((int<32>)hdr.vals32.v##n >> 31)) |
#define BLOCKMAG(p) meta.agg.block.b##p = BLOCK(MAGTERM, p) 0;
#define BLOCKOR(p) meta.agg.block.b##p |
// Round half up: (x + 2^(s-1)) >> s, clamped to the format's maximum (only x just below it can round over).
#define NARROW(n, W, MAX) {                                          \
        int<32> r = ((int<32>)hdr.vals32.v##n |+| half) >> s;        \
        if (r > MAX) { r = MAX; }                                    \
        hdr.vals##W.v##n = (bit<W>)(bit<32>)r;                       \
    }
#define NARROW16(n) NARROW(n, 16, 32767)
#define NARROW8(n) NARROW(n, 8, 127)
#define MSB(k) (32w1 << k) &&& ~((32w1 << k) - 1) : set_msb(k);

control AggNarrowIngress(inout headers_t hdr, inout metadata_t meta) {
    // Bits a two's-complement value needs are msb(x >= 0 ? x : ~x) + 2, so the OR of those magnitudes bounds
    // every element of the vector at once.
    action block_magnitudes() {
        ALL_BLOCKS(BLOCKMAG)
    }

    action compute_magnitude() {
        meta.agg.magnitude = ALL_BLOCKS(BLOCKOR) 32w0;
    }

    action set_msb(bit<8> position) {
        meta.agg.msb = position;
        meta.agg.msb_hit = 1;
    }

    // Most significant set bit of the magnitude: entry k matches 0...01xxxx with the 1 at bit k.
    table msb {
        key = {
            meta.agg.magnitude : ternary;
        }
        actions = {
            set_msb;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        const entries = {
            MSB(31) MSB(30) MSB(29) MSB(28) MSB(27) MSB(26) MSB(25) MSB(24)
            MSB(23) MSB(22) MSB(21) MSB(20) MSB(19) MSB(18) MSB(17) MSB(16)
            MSB(15) MSB(14) MSB(13) MSB(12) MSB(11) MSB(10) MSB(9) MSB(8)
            MSB(7) MSB(6) MSB(5) MSB(4) MSB(3) MSB(2) MSB(1) MSB(0)
        }
    }

    // The root checks its slot before the checksum is replaced by that of the narrow values.
    action block_sums32() {
        ALL_BLOCKS(BLOCKSUM32)
    }

    action check_sum32() {
        if (BLOCKS_TOTAL != hdr.agg.csum && (hdr.agg.flags & FLAG_OVERFLOW) == 0) {
            hdr.agg.flags = hdr.agg.flags | FLAG_CORRUPT;
        }
    }

    action narrow16(bit<8> s) {
        int<32> half = (int<32>)((32w1 << s) >> 1);   // 2^(s-1), and 0 for s = 0 (no shift by s - 1 = 255)
        hdr.vals16.setValid();
        ALL_VALUES(NARROW16)
        hdr.vals32.setInvalid();
        hdr.agg.fmt = FMT_INT16;
    }

    action narrow8(bit<8> s) {
        int<32> half = (int<32>)((32w1 << s) >> 1);   // 2^(s-1), and 0 for s = 0 (no shift by s - 1 = 255)
        hdr.vals8.setValid();
        ALL_VALUES(NARROW8)
        hdr.vals32.setInvalid();
        hdr.agg.fmt = FMT_INT8;
    }

    action block_sums16() {
        ALL_BLOCKS(BLOCKSUM16)
    }

    action block_sums8() {
        ALL_BLOCKS(BLOCKSUM8)
    }

    action resum() {
        hdr.agg.csum = BLOCKS_TOTAL;
    }

    // The root requantizes a RESULT to the job's result format with the shift the data needs.
    action requantize_width(bit<8> width) {
        meta.agg.shift = 0;
        if (meta.agg.msb_hit == 1 && meta.agg.msb + 2 > width) {
            meta.agg.shift = meta.agg.msb + 2 - width;
        }
        hdr.agg.exp = (bit<8>)((int<8>)meta.agg.scale + (int<8>)meta.agg.shift);
    }

    apply {
        bool result = meta.agg.verdict == VERDICT_DOWN || meta.agg.verdict == VERDICT_REPLY;
        bool stored = (meta.agg.status & STATUS_STORED) != 0;
        if (result && meta.agg.is_root == 1 && !stored) {
            if (meta.agg.result_fmt != FMT_INT32) {
                block_magnitudes();
                compute_magnitude();
                msb.apply();
                block_sums32();
                check_sum32();
                if (meta.agg.result_fmt == FMT_INT16) {
                    requantize_width(16);
                    narrow16(meta.agg.shift);
                    block_sums16();
                } else {
                    requantize_width(8);
                    narrow8(meta.agg.shift);
                    block_sums8();
                }
                resum();
            }
        } else if (result || meta.agg.verdict == VERDICT_PULL) {
            // A RESULT received (non-root, or adopted after a rebuild; also one answering a PULL) keeps the format
            // the root chose (stored with the slot; a PULL request is int32: unchanged): the elements
            // fit, so narrowing by 0 gives back the very bytes that arrived, checksum untouched.
            if (hdr.agg.fmt == FMT_INT16) {
                narrow16(0);
            } else if (hdr.agg.fmt == FMT_INT8) {
                narrow8(0);
            }
        }
    }
}

#endif  // P4INA_QUANTIZATION_P4
