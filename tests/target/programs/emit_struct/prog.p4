// emit() of a whole struct: every valid header in declaration order, recursing into nested structs, stacks
// (valid elements in index order) and unions (the valid member).
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> v; }
header b_t { bit<16> v; }
header_union u_t { a_t a; b_t b; }
struct inner_t { a_t first; a_t second; }
struct headers_t { a_t top; inner_t inner; a_t[3] stack; u_t u; b_t last; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.top); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        bit<8> t = h.top.v;
        if (t & 1 != 0) { h.inner.second.setValid(); h.inner.second.v = 0x22; }
        if (t & 2 != 0) { h.inner.first.setValid(); h.inner.first.v = 0x11; }
        if (t & 4 != 0) { h.stack[2].setValid(); h.stack[2].v = 0x32; }
        if (t & 8 != 0) { h.stack[0].setValid(); h.stack[0].v = 0x30; }
        if (t & 16 != 0) { h.u.b.setValid(); h.u.b.v = 0xB0B0; }
        if (t & 32 != 0) { h.last.setValid(); h.last.v = 0x1A57; }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
