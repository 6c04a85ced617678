// Header stack elements selected by a run-time index (read and write).
#include <core.p4>
#include <v1model.p4>

header idx_t { bit<8> i; bit<8> j; }
header e_t { bit<8> v; }
header out_t { bit<8> read; }
struct headers_t { out_t o; idx_t idx; e_t[4] s; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.idx);
        pkt.extract(h.s[0]);
        pkt.extract(h.s[1]);
        pkt.extract(h.s[2]);
        pkt.extract(h.s[3]);
        transition accept;
    }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.read = h.s[h.idx.i].v;
        h.s[h.idx.j].v = 0xEE;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.idx); pkt.emit(h.s); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
