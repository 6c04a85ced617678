// p4c: testdata/p4_16_errors/default-last-switch.p4 (message:
// testdata/p4_16_errors_outputs/default-last-switch.p4-stderr): `default` must be the last switch label.
// expect-error: 24:9: switch label other follows 'default' label, which is not allowed.
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
    action nop() { }
    action other() { }
    table t { key = { hdr.h.a : exact; } actions = { nop; other; } default_action = nop; }
    apply {
        switch (t.apply().action_run) {
            default: { hdr.h.b = 1; }
            other: { hdr.h.b = 2; }
        }
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
