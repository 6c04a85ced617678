// An indexed two-rate three-color meter (packets) configured over P4Runtime, an unconfigured index (always
// green), and a direct meter read in a table action (unconfigured: green).
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> idx; }
header out_t { bit<8> color; bit<8> direct_color; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    meter(2, MeterType.packets) policer;
    direct_meter<bit<8>>(MeterType.packets) per_entry;

    action read_direct() { per_entry.read(h.o.direct_color); }
    table t {
        key = { h.k.idx : exact; }
        actions = { read_direct; NoAction; }
        const entries = { 0 : read_direct(); 1 : read_direct(); }
        default_action = NoAction();
        meters = per_entry;
    }
    apply {
        h.o.setValid();
        h.o.direct_color = 0xFF;
        bit<8> color;
        policer.execute_meter((bit<32>) h.k.idx, color);
        h.o.color = color;
        t.apply();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
