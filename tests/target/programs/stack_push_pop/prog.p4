// push_front(n)/pop_front(n) with n > 1 on a stack of 4: elements shift by n, the vacated slots are invalid,
// elements shifted past the end are lost.
#include <core.p4>
#include <v1model.p4>

header op_t { bit<8> op; }
header e_t { bit<8> v; }
header out_t { bit<8> valid_mask; }
struct headers_t { out_t o; op_t op; e_t[4] s; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.op);
        pkt.extract(h.s[0]);
        pkt.extract(h.s[1]);
        pkt.extract(h.s[2]);
        transition accept;
    }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.op.op == 1) { h.s.push_front(2); }
        else if (h.op.op == 2) { h.s.pop_front(2); }
        else if (h.op.op == 3) { h.s.push_front(3); }
        h.o.setValid();
        bit<8> mask = 0;
        if (h.s[0].isValid()) { mask = mask | 1; }
        if (h.s[1].isValid()) { mask = mask | 2; }
        if (h.s[2].isValid()) { mask = mask | 4; }
        if (h.s[3].isValid()) { mask = mask | 8; }
        h.o.valid_mask = mask;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.op); pkt.emit(h.s); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
