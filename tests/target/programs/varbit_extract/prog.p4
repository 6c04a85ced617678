// Variable-length extraction: extract(hdr, n) consumes the header's fixed part plus n bits (P4_16 spec, packet_in
// extract with two arguments; BMv2 src/bm_sim/parser.cpp extract_VL advances the cursor by the header's fixed
// bytes plus n / 8), and emit writes the varbit field at the width it was extracted with. The deparser emits the
// three headers in reverse order, so the output shows how many bytes each one took from the packet.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> nbits; }
header var_t { varbit<32> v; }
header tail_t { bit<8> t; }

struct headers_t {
    len_t len;
    var_t var;
    tail_t tail;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.len);
        pkt.extract(h.var, (bit<32>)h.len.nbits);
        pkt.extract(h.tail);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply {} }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }

control CC(inout headers_t h, inout meta_t m) { apply {} }

control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.tail);
        pkt.emit(h.var);
        pkt.emit(h.len);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
