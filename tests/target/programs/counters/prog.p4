// Indexed counters of every CounterType and a direct counter on a table: counting must not disturb forwarding,
// and the P4Info must describe them (their values are read over P4Runtime, not visible in packets).
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> idx; }
struct headers_t { k_t k; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.k); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    counter(4, CounterType.packets) by_packets;
    counter(4, CounterType.bytes) by_bytes;
    counter(4, CounterType.packets_and_bytes) by_both;
    direct_counter(CounterType.packets_and_bytes) per_entry;

    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { h.k.idx : exact; }
        actions = { fwd; NoAction; }
        const entries = { 0 : fwd(1); 1 : fwd(2); }
        default_action = NoAction();
        counters = per_entry;
    }
    apply {
        sm.egress_spec = 3;
        by_packets.count((bit<32>) h.k.idx);
        by_bytes.count((bit<32>) h.k.idx);
        by_both.count((bit<32>) h.k.idx);
        t.apply();
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
