// Re-expressed from p4c testdata/p4_16_samples/arith2-bmv2.p4 (with its arith-skeleton.p4 inlined): an unsigned
// comparison through casts, in a keyless table's const default action (the old `table t()` syntax).
#include <core.p4>
#include <v1model.p4>

header hdr { bit<32> a; bit<32> b; bit<8> c; }

struct Headers { hdr h; }
struct Meta { }

parser p(packet_in b, out Headers h, inout Meta m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}

control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out b, in Headers h) { apply { b.emit(h.h); } }

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    action compare() { h.h.c = (bit<8>)(bit<1>)(h.h.a < h.h.b); sm.egress_spec = 0; }
    table t() {
        actions = { compare; }
        const default_action = compare;
    }
    apply { t.apply(); }
}

V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
