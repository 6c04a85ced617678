// Exact-match table with const entries, two keys, actions with data, and a default action with a parameter.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<16> b; }
header out_t { bit<8> act; bit<16> data; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action fwd(bit<9> port, bit<16> data) { sm.egress_spec = port; h.o.act = 1; h.o.data = data; }
    action tag(bit<16> data) { h.o.act = 2; h.o.data = data; }
    action miss(bit<16> code) { h.o.act = 3; h.o.data = code; }
    table t {
        key = { h.k.a : exact; h.k.b : exact; }
        actions = { fwd; tag; miss; }
        const entries = {
            (1, 0x0100) : fwd(2, 0xAAAA);
            (1, 0x0200) : fwd(3, 0xBBBB);
            (2, 0x0100) : tag(0xCCCC);
            (0xFF, 0xFFFF) : fwd(4, 0x1234);
        }
        default_action = miss(0xDEAD);
    }
    apply {
        h.o.setValid();
        sm.egress_spec = 1;
        t.apply();
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
