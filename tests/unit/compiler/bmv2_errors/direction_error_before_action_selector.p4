// p4c: testdata/p4_16_bmv_errors/issue679-bmv2.p4 (message: testdata/p4_16_bmv_errors_outputs/issue679-bmv2.p4-stderr).
// A verify-checksum control with an `in` headers parameter, in a program that also uses an action selector: p4c's
// type checker stops at the V1Switch argument ("Cannot unify ...") before any back end sees the selector, so the
// direction error is the one reported (and this target's own limit on action selectors is not reached).
// expect-error: 33:39: Cannot unify 'in' parameter 'hdr' with 'inout' parameter 'hdr' because they have different directions
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<16> sel; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) pick;
    table ecmp {
        key = { hdr.h.a : exact; meta.sel : selector; }
        actions = { fwd; NoAction; }
        implementation = pick;
        default_action = NoAction();
    }
    apply { ecmp.apply(); }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control MyVerifyChecksum(in headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
