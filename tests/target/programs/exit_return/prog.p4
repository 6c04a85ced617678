// exit ends every control being executed (ingress stops, egress still runs for the packet); return ends an
// action or the current control's apply block only.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> mode; }
header out_t { bit<8> steps; bit<8> egress_ran; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

control Sub(inout bit<8> steps, in bit<8> mode) {
    apply {
        steps = steps | 0x10;
        if (mode == 3) { exit; }
        if (mode == 4) { return; }
        steps = steps | 0x20;
    }
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Sub() sub;
    action early(bit<8> mode) {
        h.o.steps = h.o.steps | 1;
        if (mode == 1) { return; }
        h.o.steps = h.o.steps | 2;
    }
    apply {
        h.o.setValid();
        h.o.steps = 0;
        h.o.egress_ran = 0;
        sm.egress_spec = 1;
        early(h.k.mode);
        if (h.k.mode == 2) { exit; }
        h.o.steps = h.o.steps | 4;
        sub.apply(h.o.steps, h.k.mode);
        h.o.steps = h.o.steps | 8;
        if (h.k.mode == 5) { return; }
        h.o.steps = h.o.steps | 0x40;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { h.o.egress_ran = 1; }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
