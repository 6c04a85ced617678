// P4 functions: return values, early return, out and inout parameters, calls nested in expressions.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> a; bit<8> b; }
header out_t { bit<8> max; bit<8> clamp; bit<8> swapped_a; bit<8> swapped_b; bit<8> nested; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x;
    }
    return y;
}

bit<8> clamp(in bit<8> v, in bit<8> lo, in bit<8> hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

void swap(inout bit<8> x, inout bit<8> y) {
    bit<8> t = x;
    x = y;
    y = t;
}

void twice(in bit<8> v, out bit<8> r) {
    r = v + v;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.max = max8(h.k.a, h.k.b);
        h.o.clamp = clamp(h.k.a, 10, 20);
        bit<8> x = h.k.a;
        bit<8> y = h.k.b;
        swap(x, y);
        h.o.swapped_a = x;
        h.o.swapped_b = y;
        bit<8> t;
        twice(max8(h.k.a, 3), t);
        h.o.nested = t;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
