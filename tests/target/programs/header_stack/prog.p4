// Header stacks: filled by a parser loop with .next, then push_front/pop_front, constant indices, .size, and
// emit of a whole stack (valid elements only).
#include <core.p4>
#include <v1model.p4>

header cnt_t { bit<8> n; }
header e_t { bit<8> v; }
header out_t { bit<8> valid_mask; bit<8> size; }
struct headers_t { out_t o; cnt_t c; e_t[3] s; }
struct meta_t { bit<8> seen; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.c);
        m.seen = 0;
        transition select(h.c.n) { 0: accept; default: loop; }
    }
    state loop {
        pkt.extract(h.s.next);
        m.seen = m.seen + 1;
        transition select(h.c.n - m.seen) { 0: accept; default: loop; }
    }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.c.n == 1) {
            h.s.push_front(1);
            h.s[0].setValid();
            h.s[0].v = 0xAA;
        } else if (h.c.n == 2) {
            h.s.pop_front(1);
        } else if (h.c.n == 3) {
            h.s[2].v = h.s[0].v + h.s[1].v;
        }
        h.o.setValid();
        bit<8> mask = 0;
        if (h.s[0].isValid()) { mask = mask | 1; }
        if (h.s[1].isValid()) { mask = mask | 2; }
        if (h.s[2].isValid()) { mask = mask | 4; }
        h.o.valid_mask = mask;
        h.o.size = (bit<8>) h.s.size;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.c); pkt.emit(h.s); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
