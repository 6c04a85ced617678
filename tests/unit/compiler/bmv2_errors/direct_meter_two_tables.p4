// p4c: backends/bmv2/common/metermap.cpp (DirectMeterMap::setTable): a direct meter belongs to one table. p4c names
// the table being converted first, then the one that already holds the meter.
// expect-error: 20:45: MyIngress.m: Direct meters cannot be attached to multiple tables MyIngress.t2 and MyIngress.t1
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
    direct_meter<bit<2>>(MeterType.packets) m;
    action color() { m.read(meta.color); }
    table t1 { key = { hdr.h.a : exact; } actions = { color; } meters = m; }
    table t2 { key = { hdr.h.b : exact; } actions = { color; } meters = m; }
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
