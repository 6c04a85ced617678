// update_checksum_with_payload: a UDP-style checksum over a pseudo-header, the UDP header and the unparsed
// payload (even and odd lengths); verify_checksum_with_payload flags a wrong one.
#include <core.p4>
#include <v1model.p4>

header ip_t { bit<32> src; bit<32> dst; bit<8> proto; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header out_t { bit<8> csum_ok; }
struct headers_t { out_t o; ip_t ip; udp_t udp; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.ip); pkt.extract(h.udp); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum_with_payload(h.udp.isValid(),
            { h.ip.src, h.ip.dst, 8w0, h.ip.proto, h.udp.len, h.udp.sport, h.udp.dport, h.udp.len },
            h.udp.csum, HashAlgorithm.csum16);
    }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.csum_ok = sm.checksum_error == 0 ? 8w1 : 8w0;
        h.udp.sport = h.udp.sport + 1;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum_with_payload(h.udp.isValid(),
            { h.ip.src, h.ip.dst, 8w0, h.ip.proto, h.udp.len, h.udp.sport, h.udp.dport, h.udp.len },
            h.udp.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.ip); pkt.emit(h.udp); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
