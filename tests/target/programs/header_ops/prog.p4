// Whole-header operations: assignment copies the validity bit with the fields, {#} makes a header invalid,
// minSizeInBytes() is a compile-time size. (Header equality is in header_equality.)
#include <core.p4>
#include <v1model.p4>

header v_t { bit<8> x; bit<8> y; }
header out_t { bit<8> flags; bit<8> size; }
struct headers_t { out_t o; v_t a; v_t b; v_t copy; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.a);
        transition select(h.a.x) { 0xBB: with_b; default: accept; }
    }
    state with_b { pkt.extract(h.b); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        bit<8> f = 0;
        h.copy = h.a;
        if (h.copy.isValid()) { f = f | 2; }
        if (h.copy.x == h.a.x && h.copy.y == h.a.y) { f = f | 4; }
        if (h.a.y == 0xFF) {
            h.a = {#};
        }
        if (!h.b.isValid()) {
            h.b = h.copy;
            h.b.y = h.b.y + 1;
        }
        h.o.flags = f;
        h.o.size = (bit<8>) h.a.minSizeInBytes();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.a); pkt.emit(h.b); pkt.emit(h.copy); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
