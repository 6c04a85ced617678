// Parser errors as v1model reports them: verify() with a program error, PacketTooShort, NoMatch (select without
// default). The packet continues into ingress with parser_error set; headers extracted before the error stay
// valid and the unparsed rest is the payload.
#include <core.p4>
#include <v1model.p4>

error { BadMagic }

header hd_t { bit<8> magic; bit<8> len; }
header body_t { bit<32> x; }
header out_t { bit<8> err; }
struct headers_t { out_t o; hd_t hd; body_t body; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.hd);
        verify(h.hd.magic == 0x5A, error.BadMagic);
        transition select(h.hd.len) {
            4: body;
            0: accept;
        }
    }
    state body { pkt.extract(h.body); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        if (sm.parser_error == error.NoError) { h.o.err = 0; }
        else if (sm.parser_error == error.PacketTooShort) { h.o.err = 1; }
        else if (sm.parser_error == error.NoMatch) { h.o.err = 2; }
        else if (sm.parser_error == error.BadMagic) { h.o.err = 3; }
        else { h.o.err = 9; }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.hd); pkt.emit(h.body); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
