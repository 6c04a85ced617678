// lookahead<T>() of bits and of a header type (cursor unchanged), advance(), and select on a looked-ahead value.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> t; bit<8> v; }
header out_t { bit<8> peek; bit<16> peek16; bit<8> peek_t; bit<8> path; }
struct headers_t { out_t o; a_t a; }
struct meta_t { bit<8> peek; bit<16> peek16; bit<8> peek_t; bit<8> path; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        m.peek = pkt.lookahead<bit<8>>();
        m.peek16 = pkt.lookahead<bit<16>>();
        m.peek_t = pkt.lookahead<a_t>().v;
        transition select(m.peek) { 0xAA: skip; default: take; }
    }
    state skip { pkt.advance(16); m.path = 1; transition take_after_skip; }
    state take_after_skip { pkt.extract(h.a); transition accept; }
    state take { m.path = 2; pkt.extract(h.a); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.peek = m.peek;
        h.o.peek16 = m.peek16;
        h.o.peek_t = m.peek_t;
        h.o.path = m.path;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.a); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
