// truncate(n): the packet that leaves is cut to its first n bytes (headers included); without it, the whole
// packet leaves.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> len; }
struct headers_t { k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.k.len != 0) {
            truncate((bit<32>) h.k.len);
        }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
