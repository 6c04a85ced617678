// Bit slices (read and write) and concatenation ++.
#include <core.p4>
#include <v1model.p4>

header in_t  { bit<16> w; bit<8> b; }
header out_t { bit<8> hi; bit<4> mid; bit<4> low; bit<24> cat; bit<8> patched; bit<12> cat2; bit<4> pad; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.hi = h.i.w[15:8];
        h.o.mid = h.i.w[9:6];
        h.o.low = h.i.b[3:0];
        h.o.cat = h.i.w ++ h.i.b;
        h.o.patched = h.i.b;
        h.o.patched[7:4] = h.i.w[3:0];
        h.o.patched[0:0] = 1w0;
        h.o.cat2 = 4w0xA ++ h.i.b[7:0];
        h.o.pad = 0;
        sm.egress_spec = 3;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
