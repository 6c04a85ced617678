// switch on a bit<8> value with grouped labels and default; && and || evaluate their right operand only when
// needed (a function with a side effect counts its calls); ?: evaluates one branch.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<8> b; }
header out_t { bit<8> sw; bit<8> calls; bit<8> cond; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

bool bump(inout bit<8> counter, in bool result) {
    counter = counter + 1;
    return result;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        switch (h.k.a) {
            1:
            2: { h.o.sw = 12; }
            3: { h.o.sw = 3; }
            default: { h.o.sw = 0xDD; }
        }
        bit<8> calls = 0;
        bit<8> cond = 0;
        if (h.k.b == 0 || bump(calls, true)) { cond = cond | 1; }
        if (h.k.b == 0 && bump(calls, true)) { cond = cond | 2; }
        if (bump(calls, h.k.b > 5) || bump(calls, false)) { cond = cond | 4; }
        bool pick = h.k.b == 7 ? bump(calls, true) : bump(calls, false);
        if (pick) { cond = cond | 8; }
        h.o.calls = calls;
        h.o.cond = cond;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
