// p4ina: the IPv4 header checksum (verified on arrival, recomputed on departure) and the linear checksum of the
// aggregation protocol (the sum of the AGG_VALUES values mod 2^32, docs/protocol.md).
#ifndef P4INA_CHECKSUM_P4
#define P4INA_CHECKSUM_P4

#include "headers.p4"

control P4inaVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control P4inaComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

// The linear checksum over the vector, as a tree: BLOCKSUM32/16/8(p) is one action statement setting block p's
// partial sum (one expression over its <= 64 elements: the int32 values, or the sign-extended narrow ones) and
// BLOCKS_TOTAL the sum of the partial sums. Never a running `acc = acc + v` per element: p4c's BMv2 JSON grows
// about N^2.8 with one (docs/p4-program.md, "Values per packet").
#define TERM32(n) hdr.vals32.v##n +
#define TERM16(n) (bit<32>)(int<32>)(int<16>)hdr.vals16.v##n +
#define TERM8(n) (bit<32>)(int<32>)(int<8>)hdr.vals8.v##n +
#define BLOCKSUM32(p) meta.agg.block.b##p = BLOCK(TERM32, p) 0;
#define BLOCKSUM16(p) meta.agg.block.b##p = BLOCK(TERM16, p) 0;
#define BLOCKSUM8(p) meta.agg.block.b##p = BLOCK(TERM8, p) 0;
#define BLOCKTERM(p) meta.agg.block.b##p +
#define BLOCKS_TOTAL (ALL_BLOCKS(BLOCKTERM) 32w0)

#endif  // P4INA_CHECKSUM_P4
