// Compile-time constants: division and modulo of constants, widths given by expressions, every literal base,
// underscores in literals, typedefs of computed widths, and constants from #define.
#include <core.p4>
#include <v1model.p4>

#define OFFSET 0x10
const bit<8> Q = 100 / 7;
const bit<8> R = 100 % 7;
const int N = 3;
const bit<16> BIG = (1 << 12) + OFFSET;
typedef bit<(N * 4)> b12_t;

header out_t { bit<8> q; bit<8> r; bit<16> big; b12_t twelve; bit<4> pad; bit<8> hex; bit<8> bin; bit<8> oct;
               bit<8> dec; bit<8> wrapped; }
struct headers_t { out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.q = Q;
        h.o.r = R;
        h.o.big = BIG;
        h.o.twelve = 12w0xABC;
        h.o.pad = 0;
        h.o.hex = 0x7f;
        h.o.bin = 0b1010_0101;
        h.o.oct = 0o17;
        h.o.dec = 1_2_7;
        h.o.wrapped = 8w250 + 8w10;
        sm.egress_spec = 4;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
