// `break` outside a loop (P4_16 1.2.5: break and continue only inside for loops): a type error.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; }
struct headers_t { a_t a; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.a); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action stop() {
        if (h.a.x == 0) { break; }
        h.a.x = 1;
    }
    apply { stop(); sm.egress_spec = 1; }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.a); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
