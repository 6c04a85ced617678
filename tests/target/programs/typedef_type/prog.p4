// typedef (an alias) and type (a new type): header fields of both, explicit casts to and from a `type`.
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
type bit<32> ip_t;
typedef ip_t addr_t;

header k_t { mac_t mac; ip_t ip; }
header out_t { mac_t mac; bit<32> ip_plus_one; bit<8> is_zero; }
struct headers_t { out_t o; k_t k; }
struct meta_t { addr_t saved; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        mac_t mac = h.k.mac;
        h.o.mac = mac ^ 48w0xFFFF;
        m.saved = h.k.ip;
        h.o.ip_plus_one = (bit<32>) m.saved + 1;
        h.o.is_zero = (h.k.ip == (ip_t) 32w0) ? 8w1 : 8w0;
        h.k.ip = (ip_t) 32w0x01020304;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
