// A control instance passed to other controls' constructor parameters (P4_16: a constructor parameter may have a
// control type; the argument is an instance, as in p4c's issue1566-bmv2). `s` is one instance: both `a` and `b`
// apply it, so they share its register, which counts every application (twice per packet); P4Info lists it once,
// under the name of the block that declares it (I.e.s.r).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> x; }
struct headers_t { h_t h; }
struct meta_t {}

control step_t(inout bit<16> x);

control Step(inout bit<16> x) {
    register<bit<16>>(1) r;
    apply {
        bit<16> n;
        r.read(n, 0);
        n = n + 1;
        r.write(0, n);
        x = x + n;
    }
}

control Twice(inout bit<16> x)(step_t s) {
    apply {
        x = x << 1;
        s.apply(x);
    }
}

control Eight(inout bit<16> x)(step_t s) {
    apply {
        x = x << 3;
        s.apply(x);
    }
}

control E(inout bit<16> x) {
    Step() s;
    Twice(s) a;
    Eight(s) b;
    apply {
        a.apply(x);
        b.apply(x);
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t m) { apply {} }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    E() e;
    apply {
        e.apply(hdr.h.x);
        sm.egress_spec = 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }

control CC(inout headers_t hdr, inout meta_t m) { apply {} }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;
