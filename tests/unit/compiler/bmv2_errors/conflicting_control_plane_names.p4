// p4c: testdata/p4_16_errors/actions-with-duplicate-control-plane-names1.p4 (messages in
// testdata/p4_16_errors_outputs/): two actions whose @name gives them one fully-qualified name; p4c reports the later
// declaration with both names as written.
// expect-error: 22:25: foo: conflicting control plane name: foo
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; bit<2> color; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {  }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @name("foo") action a1() { hdr.h.b = 1; }
    @name("foo") action a2() { hdr.h.b = 2; }
    table t { key = { hdr.h.a : exact; } actions = { a1; a2; } }
    apply {
        t.apply();
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {

    apply {  }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {  }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
