// p4c: testdata/p4_16_bmv_errors/reused-counter-bmv2.p4 (message:
// testdata/p4_16_bmv_errors_outputs/reused-counter-bmv2.p4-stderr); backends/bmv2/common/control.cpp.
// expect-error: 20:41: MyIngress.c: Direct counters cannot be attached to multiple tables MyIngress.t1 and MyIngress.t2
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
    direct_counter(CounterType.packets) c;
    action my_action(bit<9> a) { sm.egress_spec = a; }
    table t1 { actions = { my_action; } const default_action = my_action(0); counters = c; }
    table t2 { actions = { my_action; } const default_action = my_action(0); counters = c; }
    apply {
        t1.apply();
        t2.apply();
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
