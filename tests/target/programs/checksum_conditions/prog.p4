// Checksum conditions: verify_checksum with a false condition never flags an error and update_checksum with a
// false condition leaves the field alone. Packets sent to a port with no interface attached are lost quietly.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> check; bit<8> a; bit<8> b; bit<16> csum; bit<8> port; }
header out_t { bit<8> csum_ok; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum(h.k.check == 1, { h.k.a, h.k.b }, h.k.csum, HashAlgorithm.csum16);
    }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.csum_ok = sm.checksum_error == 0 ? 8w1 : 8w0;
        h.k.a = h.k.a + 1;
        sm.egress_spec = (bit<9>) h.k.port;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum(h.k.check == 1, { h.k.a, h.k.b }, h.k.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
