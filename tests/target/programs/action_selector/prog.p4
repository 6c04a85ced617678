// ECMP with a v1model action_selector: a group of three members chosen by a CRC-16 of the flow's selector keys,
// an entry pointing at a member, a miss; installed from entries.txtpb in file mode (`--entries`).
#include <core.p4>
#include <v1model.p4>

header flow_t { bit<8> kind; bit<32> src; bit<16> port; }
struct headers_t { flow_t flow; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.flow); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action_selector(HashAlgorithm.crc16, 32w16, 32w16) sel;
    action to_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table ecmp {
        key = { h.flow.kind : exact; h.flow.port : selector; h.flow.src : selector; }
        actions = { to_port; drop; }
        default_action = drop();
        implementation = sel;
    }
    apply { ecmp.apply(); }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.flow); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
