// After p4c's testdata/p4_16_samples/bvec-hdr-bmv2.p4: a header whose only field is a struct, a table keyed on
// one of the struct's fields, const entries. P4Info only (p4c has no .stf for it).
#include <v1model.p4>

struct row_t {
    bit<8>  e;
    bit<16> t;
    bit<8>  l;
    bit<8>  r;
    bit<8>  v;
}

header hdr { row_t row; }

struct Header_t { hdr h; }
struct Meta_t {}

parser p(packet_in b, out Header_t h, inout Meta_t m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}

control vrfy(inout Header_t h, inout Meta_t m) { apply {} }
control update(inout Header_t h, inout Meta_t m) { apply {} }
control egress(inout Header_t h, inout Meta_t m, inout standard_metadata_t sm) { apply {} }
control deparser(packet_out b, in Header_t h) { apply { b.emit(h.h); } }

control ingress(inout Header_t h, inout Meta_t m, inout standard_metadata_t standard_meta) {
    action a() { standard_meta.egress_spec = 0; }
    action a_with_control_params(bit<9> x) { standard_meta.egress_spec = x; }
    table t_exact {
        key = { h.h.row.e : exact; }
        actions = { a; a_with_control_params; }
        default_action = a;
        const entries = {
            0x01 : a_with_control_params(1);
            0x02 : a_with_control_params(2);
        }
    }
    apply { t_exact.apply(); }
}

V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
