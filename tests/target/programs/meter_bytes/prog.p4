// A byte-based two-rate three-color meter: each packet is measured by its length in bytes, so a small packet
// can still be green after a large one was colored yellow or red.
#include <core.p4>
#include <v1model.p4>

header out_t { bit<8> color; }
struct headers_t { out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    meter(1, MeterType.bytes) by_bytes;
    apply {
        h.o.setValid();
        by_bytes.execute_meter(32w0, h.o.color);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
