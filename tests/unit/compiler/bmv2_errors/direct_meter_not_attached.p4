// p4c: testdata/p4_16_bmv_errors/issue1829-2-bmv2.p4 and issue1829-3-bmv2.p4 (messages in
// testdata/p4_16_bmv_errors_outputs/); backends/bmv2/simple_switch/simpleSwitch.cpp (direct_meter instance): the
// meter is read in a table's action but no table names it in a `meters` property.
// expect-error: 21:45: MyIngress.da_meter: direct meter is not associated with any table via 'meters' table property
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
    direct_meter<bit<2>>(MeterType.packets) da_meter;
    action set_color() { da_meter.read(meta.color); }
    table mac_da { key = { hdr.h.a : exact; } actions = { set_color; } }
    apply {
        mac_da.apply();
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
