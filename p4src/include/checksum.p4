// p4ina: the IPv4 header checksum (verified on arrival, recomputed on departure) and the linear checksum of the
// aggregation protocol (the sum of the 64 values mod 2^32, docs/protocol.md).
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

// Linear checksum helpers (used inside actions): LINSUM32 adds every int32 element of hdr.vals32 into `acc`,
// LINSUM16/LINSUM8 add the sign-extended narrow elements.
#define LINADD32(n) acc = acc + hdr.vals32.v##n;
#define LINADD16(n) acc = acc + (bit<32>)(int<32>)(int<16>)hdr.vals16.v##n;
#define LINADD8(n) acc = acc + (bit<32>)(int<32>)(int<8>)hdr.vals8.v##n;

#endif  // P4INA_CHECKSUM_P4
