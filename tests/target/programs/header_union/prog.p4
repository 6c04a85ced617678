// Header unions: at most one member valid; parse either member; isValid on the union and its members;
// setValid on one member invalidates the other.
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; }
header v4_t { bit<32> addr; }
header v6_t { bit<64> addr; }
header_union ip_u { v4_t v4; v6_t v6; }
header out_t { bit<8> which; }
struct headers_t { out_t o; tag_t t; ip_u ip; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.t);
        transition select(h.t.kind) { 4: p4; 6: p6; 8: p6; default: accept; }
    }
    state p4 { pkt.extract(h.ip.v4); transition accept; }
    state p6 { pkt.extract(h.ip.v6); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.which = 0;
        if (h.ip.isValid()) { h.o.which = h.o.which | 0x80; }
        if (h.ip.v4.isValid()) { h.o.which = h.o.which | 4; }
        if (h.ip.v6.isValid()) { h.o.which = h.o.which | 6; }
        if (h.t.kind == 7 || h.t.kind == 8) {
            // kind 8 parsed v6: making v4 valid invalidates v6, the union now holds only v4
            h.ip.v4.setValid();
            h.ip.v4.addr = 0x0A000001;
        }
        sm.egress_spec = 2;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.t); pkt.emit(h.ip); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
