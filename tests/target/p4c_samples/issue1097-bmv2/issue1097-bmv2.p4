// After p4c's testdata/p4_16_samples/issue1097-bmv2.p4 (Apache-2.0): a register instantiated at program scope and
// read in ingress. p4c's P4Info names it "r", with no control prefix.
#include <core.p4>
#include <v1model.p4>

struct Headers {}
struct Meta {}

register<bit<8>>(2) r;

parser p(packet_in b, out Headers h, inout Meta m, inout standard_metadata_t sm) {
    state start { transition accept; }
}

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    apply {
        bit<8> x;
        r.read(x, 0);
    }
}

control vrfy(inout Headers h, inout Meta m) { apply {} }
control update(inout Headers h, inout Meta m) { apply {} }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply {} }
control deparser(packet_out b, in Headers h) { apply {} }

V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
