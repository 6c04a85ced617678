// p4c: backends/bmv2/common/metermap.cpp (DirectMeterMap::setDestination): BMv2 writes a direct meter's color to
// one field, so every read must name the same destination.
// expect-error: 22:26: all meter operations must write to the same destination, however meta.x and meta.color are different
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> addr; bit<32> addr2; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; bit<8> color; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {  }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) m;
    action c1() { m.read(meta.color); }
    action c2() { m.read(meta.x); }
    table t { key = { hdr.h.a : exact; } actions = { c1; c2; } meters = m; }
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
