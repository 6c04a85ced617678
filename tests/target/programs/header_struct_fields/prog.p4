// A struct-typed field inside a header (P4_16 7.2.2: a header field may be a struct of bit/bool fields): its
// fields are on the wire in declaration order, are read and written through the nested member, can be a table
// key, and travel with the header on copy, equality and setValid (which zeroes them for an invalid header).
#include <core.p4>
#include <v1model.p4>

struct row_t { bit<8> e; bit<16> t; bit<4> l; bit<4> r; }
header h_t { bit<8> tag; row_t row; }
header eq_t { bit<8> same; bit<8> differs; }
struct headers_t { h_t h; h_t fresh; eq_t eq; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action route(bit<9> port) { sm.egress_spec = port; }
    table by_e {
        key = { h.h.row.e : exact; }
        actions = { route; NoAction; }
        default_action = NoAction();
        const entries = { 0x01 : route(2); }
    }
    apply {
        sm.egress_spec = 1;
        by_e.apply();
        h_t before = h.h;
        h.eq.setValid();
        h.eq.same = (before == h.h) ? 8w1 : 8w0;     // 1: the copy holds the nested fields too
        h.h.row.t = h.h.row.t + 1;
        h.h.row.l = h.h.row.r;
        h.eq.differs = (before != h.h) ? 8w1 : 8w0;  // 1: a nested field changed
        if (h.h.tag == 0xAA) {
            h.fresh = h.h;           // a copy of the header, nested struct included
        } else {
            h.fresh.setValid();      // was invalid: every field, nested ones too, reads 0
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.h); pkt.emit(h.fresh); pkt.emit(h.eq); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
