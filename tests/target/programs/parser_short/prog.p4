// Running out of packet in the parser: lookahead and advance past the end raise PacketTooShort like extract.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> mode; }
header out_t { bit<8> err; bit<16> peek; }
struct headers_t { out_t o; k_t k; }
struct meta_t { bit<16> peek; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.k);
        transition select(h.k.mode) { 1: peek; 2: skip; default: accept; }
    }
    state peek { m.peek = pkt.lookahead<bit<16>>(); transition accept; }
    state skip { pkt.advance(32); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.err = sm.parser_error == error.PacketTooShort ? 8w1 : 8w0;
        h.o.peek = m.peek;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
