// Header validity: isValid after parsing, setValid/setInvalid in ingress, and emit skipping invalid headers.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> v; }
header b_t { bit<8> v; }
header flag_t { bit<8> f; }
struct headers_t { flag_t fl; a_t a; b_t b; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.a); transition select(h.a.v) { 1: parse_b; default: accept; } }
    state parse_b { pkt.extract(h.b); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.fl.setValid();
        h.fl.f = 0;
        if (h.a.isValid()) { h.fl.f = h.fl.f | 1; }
        if (h.b.isValid()) { h.fl.f = h.fl.f | 2; }
        bit<8> v = h.a.v;
        if (v == 3) {
            h.b.setValid();
            h.b.v = 0x33;
        }
        if (v == 2) {
            h.a.setInvalid();
        }
        if (!h.b.isValid() && v == 4) {
            h.fl.setInvalid();
        }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.fl); pkt.emit(h.a); pkt.emit(h.b); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
