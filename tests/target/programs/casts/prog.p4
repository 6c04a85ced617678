// Casts: truncation, zero extension, bool <-> bit<1>, bit<8> <-> int<8> reinterpretation; a cast binds tighter
// than a shift.
#include <core.p4>
#include <v1model.p4>

header in_t  { bit<16> w; bit<8> b; bit<1> flag; bit<7> rest; }
header out_t { bit<8> trunc; bit<16> zext; bit<1> from_bool; bit<7> pad; bit<8> from_flag; int<8> reinterp;
               bit<32> wide; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.trunc = (bit<8>) h.i.w;
        h.o.zext = (bit<16>) h.i.b;
        h.o.from_bool = (bit<1>) (h.i.b == 8w0x42);
        h.o.pad = 0;
        bool f = (bool) h.i.flag;
        h.o.from_flag = f ? 8w0xF1 : 8w0xF0;
        h.o.reinterp = (int<8>) h.i.b;
        h.o.wide = (bit<32>) h.i.w << 8;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
