// p4c: testdata/p4_16_bmv_errors/emit-struct-bmv2.p4, issue1653-recir-bmv2.p4, issue1653-resubmit-bmv2.p4 and
// issue363-err-bmv2.p4 name their verify-checksum control verify_checksum and pass verify_checksum() to V1Switch.
// Their stderr is not in the index; the wording and place are those of issue383-err-bmv2.p4-stderr, stored for an
// older version of that program with the same control. p4c finds the clash while resolving names, before the type
// error the call `verify_checksum()` (v1model's extern function, four parameters) would give.
// expect-error: 18:9: Re-declaration of verify_checksum with different type:
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control verify_checksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), verify_checksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
