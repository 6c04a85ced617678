// Many language features in one v1model program: typedef/type, serializable and plain enums, header unions,
// controller headers, functions with out parameters, tuples, multi-label switch, direct counters and meters,
// meters, digests, random, log_msg, update_checksum. Used by test_features_program.py.
#include <core.p4>
#include <v1model.p4>
typedef bit<48> mac_t;
type bit<9> port_t;
enum bit<8> Kind { A = 1, B = 2 }
enum Plain { X, Y }
header eth_t { mac_t dst; mac_t src; bit<16> etype; }
header v4_t { bit<8> a; }
header v6_t { bit<16> b; }
header_union ip_u { v4_t v4; v6_t v6; }
header res_t { bit<8> f1; bit<8> f2; bit<16> f3; bit<32> f4; }
@controller_header("packet_in") header pin_t { bit<9> port; bit<7> pad; }
struct headers_t { pin_t pin; eth_t eth; ip_u ip; res_t res; }
struct meta_t { bit<8> x; tuple<bit<8>, bit<16>> tp; Plain pl; Kind k; }
struct dig_t { mac_t src; bit<9> port; }

bit<8> twice(in bit<8> v, out bit<8> half) { half = v >> 1; return v << 1; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition select(h.eth.etype) { 0x0800: v4; 0x86dd: v6; default: accept; } }
    state v4 { pkt.extract(h.ip.v4); transition accept; }
    state v6 { pkt.extract(h.ip.v6); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) dc;
    meter(4, MeterType.bytes) mtr;
    direct_meter<bit<8>>(MeterType.packets) dm;
    @name("fwd_action") action fwd(port_t p) { sm.egress_spec = (bit<9>) p; dc.count(); }
    action setk(Kind k) { m.k = k; dm.read(h.res.f2); }
    action nop() { }
    @name(".global_table") table t1 {
        key = { h.eth.dst : exact @name("dmac"); h.ip.v4.isValid() : exact; }
        actions = { fwd; @defaultonly nop; }
        default_action = nop();
        counters = dc;
        size = 64;
    }
    table t2 {
        key = { h.eth.src : ternary; }
        actions = { setk; nop; }
        meters = dm;
        const default_action = nop();
    }
    apply {
        h.res.setValid();
        t1.apply();
        t2.apply();
        bit<8> half;
        h.res.f1 = twice(8w21, half);
        h.res.f3 = (bit<16>) half;
        m.tp = { 8w1, 16w2 };
        h.res.f4 = (bit<32>) m.tp[1];
        switch (h.eth.etype[7:0]) {
            0x00: { h.res.f2 = 1; }
            0xdd: 0x11: { h.res.f2 = 2; }
            default: { }
        }
        if (h.ip.isValid()) { h.res.f4 = h.res.f4 + 1; }
        if (h.ip.v6.isValid()) { h.ip.v4.setValid(); h.ip.v4.a = 3; }
        m.pl = Plain.Y;
        if (m.pl == Plain.Y) { h.res.f3 = h.res.f3 + 100; }
        mtr.execute_meter(32w1, h.res.f2);
        digest<dig_t>(1, { h.eth.src, sm.ingress_port });
        random(m.x, 8w1, 8w5);
        log_msg("hello {} {}", { m.x, h.res.f1 });
        if (sm.ingress_port == 64) { h.pin.setValid(); h.pin.port = sm.ingress_port; }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) {
    apply { update_checksum(h.res.isValid(), { h.res.f1, h.res.f2 }, h.res.f3, HashAlgorithm.csum16); }
}
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.pin); pkt.emit(h.eth); pkt.emit(h.ip); pkt.emit(h.res); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
