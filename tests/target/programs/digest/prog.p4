// digest() of a named struct to the control plane: forwarding is unaffected and the P4Info names the digest.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<16> b; }
struct learn_t { bit<8> a; bit<16> b; bit<9> port; }
struct headers_t { k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.k.a != 0) {
            digest<learn_t>(1, { h.k.a, h.k.b, sm.ingress_port });
        }
        sm.egress_spec = 2;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
