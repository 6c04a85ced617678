// An extern instantiated at program scope, outside every control: one register shared by ingress and egress
// (P4_16: a top-level instantiation is a single object), named without a block prefix on the control plane, as
// p4c's P4Info names it ("r", p4c's issue1097-bmv2). Ingress writes a + 1 into cell a and egress reads cell a
// back into b: one shared register gives b = a + 1, one register per control would give 0.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t { h_t h; }
struct meta_t {}

register<bit<8>>(256) r;

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t m) { apply {} }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        r.write((bit<32>)hdr.h.a, hdr.h.a + 1);
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        r.read(hdr.h.b, (bit<32>)hdr.h.a);
    }
}

control CC(inout headers_t hdr, inout meta_t m) { apply {} }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
