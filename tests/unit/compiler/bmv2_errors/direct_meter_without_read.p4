// p4c: testdata/p4_16_bmv_errors/issue1167-bmv2.p4 and issue1829-1-bmv2.p4 (messages in
// testdata/p4_16_bmv_errors_outputs/); backends/bmv2/common/metermap.cpp (DirectMeterMap::setTable).
// expect-error: 22:11: MyIngress.guh: table with direct meter MyIngress.my_meter must have at least one action with a read method call
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
    direct_meter<bit<2>>(MeterType.bytes) my_meter;
    action nop() { }
    table guh { key = { hdr.h.a : exact; } actions = { nop; } meters = my_meter; }
    apply {
        guh.apply();
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
