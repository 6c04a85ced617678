// Calling conventions (P4_16 6.8): arguments are evaluated left to right and copied in at the call; inout/out
// parameters are copied out left to right at return (so with the same argument twice the last copy wins);
// an action reading its `in` parameter sees the value from the call even after changing the original.
// Also: a cast truncates a compile-time constant, and emitting a header twice emits it twice.
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> x; bit<8> y; }
header out_t { bit<8> alias; bit<8> copied; bit<8> first; bit<8> second; bit<8> calls; bit<8> trunc; }
struct headers_t { out_t o; k_t k; }
struct meta_t { }

void set_both(inout bit<8> p, inout bit<8> q) {
    p = 1;
    q = 2;
}

bit<8> next_value(inout bit<8> counter) {
    counter = counter + 1;
    return counter;
}

void record(in bit<8> a, in bit<8> b, out bit<8> first, out bit<8> second) {
    first = a;
    second = b;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action keep(in bit<8> v) {
        h.k.x = 0;
        h.o.copied = v;
    }
    apply {
        h.o.setValid();
        bit<8> a = 7;
        set_both(a, a);
        h.o.alias = a;
        keep(h.k.x);
        bit<8> counter = 10;
        record(next_value(counter), next_value(counter), h.o.first, h.o.second);
        h.o.calls = counter;
        h.o.trunc = (bit<8>) 300;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.o); pkt.emit(h.k); pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
