// Registers keep state across packets: read-modify-write inside one action, several arrays and element widths,
// index computed from the packet.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> idx; bit<32> add; }
header out_t { bit<32> before; bit<32> after; bit<8> visits; bit<16> last; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(8) acc;
    register<bit<8>>(8) visits;
    register<bit<16>>(1) last_add;

    action update() {
        bit<32> i = (bit<32>) h.k.idx;
        bit<32> old;
        acc.read(old, i);
        h.o.before = old;
        h.o.after = old + h.k.add;
        acc.write(i, old + h.k.add);
        bit<8> v;
        visits.read(v, i);
        v = v + 1;
        visits.write(i, v);
        h.o.visits = v;
        last_add.read(h.o.last, 0);
        last_add.write(0, h.k.add[15:0]);
    }
    apply {
        h.o.setValid();
        update();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
