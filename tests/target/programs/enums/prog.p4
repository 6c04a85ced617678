// Enums: a plain enum held in metadata and compared, a serializable enum cast from a header field, switch on
// an enum with a default, and enum members converted back to bits.
#include <core.p4>
#include <v1model.p4>

enum Color { Red, Green, Blue }
enum bit<8> Op { ADD = 1, SUB = 2, XOR = 0x10 }

header k_t { bit<8> op; bit<8> a; bit<8> b; }
header out_t { bit<8> result; bit<8> color_code; bit<8> sub_code; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        Op op = (Op) h.k.op;
        Color c = Color.Red;
        switch (op) {
            Op.ADD: { h.o.result = h.k.a + h.k.b; c = Color.Green; }
            Op.SUB: { h.o.result = h.k.a - h.k.b; c = Color.Blue; }
            Op.XOR: { h.o.result = h.k.a ^ h.k.b; }
            default: { h.o.result = 0xFF; }
        }
        if (c == Color.Green) { h.o.color_code = 1; }
        else if (c == Color.Blue) { h.o.color_code = 2; }
        else { h.o.color_code = 0; }
        h.o.sub_code = (bit<8>) Op.SUB;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
