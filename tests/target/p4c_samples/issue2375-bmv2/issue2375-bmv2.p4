// Re-expressed from p4c testdata/p4_16_samples/issue2375-bmv2.p4: a keyless table whose only action has two
// `inout` parameters bound in the actions list to the same control local; P4Info (NoAction as the default-only
// initial default action, the action without its directional parameters).
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst_addr; bit<48> src_addr; bit<16> eth_type; }
struct Headers { ethernet_t eth_hdr; }
struct Meta { }

parser p(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start { transition parse_hdrs; }
    state parse_hdrs { pkt.extract(hdr.eth_hdr); transition accept; }
}

control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    bool tmp = false;
    action do_action(inout bool val1, inout bool val2) { }
    table simple_table {
        key = { }
        actions = { do_action(tmp, tmp); }
    }
    apply { simple_table.apply(); }
}

control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out pkt, in Headers h) { apply { pkt.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
