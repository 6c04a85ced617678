// random(): values stay within [lo, hi] (inclusive), also when lo == hi; only ranges are checked.
#include <core.p4>
#include <v1model.p4>

header out_t { bit<8> small; bit<16> wide; bit<8> fixed; bit<32> big; }
struct headers_t { out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        random(h.o.small, 8w10, 8w20);
        random(h.o.wide, 16w1000, 16w1003);
        random(h.o.fixed, 8w42, 8w42);
        random(h.o.big, 32w0, 32w0xFFFFFFFF);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
