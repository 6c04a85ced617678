// P4_16 1.2.5 loops inside actions (where p4c's BMv2 back end compiles them, with _jump primitives): the
// three-clause `for` with several initializers and updates, `break`/`continue` binding to the innermost loop,
// `continue` still running the updates, and `return` leaving the action from inside a loop. (`for`-in, which
// p4c's BMv2 back end rejects, is tested in tests/unit/compiler/test_codegen_semantics.py.)
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> mode; bit<8> n; }
header out_t { bit<32> a; bit<32> b; }
struct headers_t { in_t i; out_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    // a = 1 + 2 + ... + n; b = the number of iterations
    action sum_to_n() {
        for (bit<8> k = 1; k <= h.i.n; k = k + 1) {
            h.o.a = h.o.a + (bit<32>)k;
            h.o.b = h.o.b + 1;
        }
    }
    // odd k below n, stopping at 7: continue skips the body's rest but not the update
    action odd_until_seven() {
        for (bit<8> k = 0; k < h.i.n; k = k + 1) {
            if (k == 7) { break; }
            if ((k & 1) == 0) { continue; }
            h.o.a = h.o.a + (bit<32>)k;
            h.o.b = h.o.b + 1;
        }
    }
    // the inner break ends the inner loop only: b counts pairs (x, y) with y <= x < n, y < n
    action nested() {
        for (bit<8> x = 0; x < h.i.n; x = x + 1) {
            for (bit<8> y = 0; y < h.i.n; y = y + 1) {
                if (y > x) { break; }
                h.o.b = h.o.b + 1;
            }
            h.o.a = h.o.a + 1;
        }
    }
    // two loop variables, two updates: a = steps until lo meets hi
    action meet() {
        for (bit<8> lo = 0, bit<8> hi = h.i.n; lo < hi; lo = lo + 1, hi = hi - 1) {
            h.o.a = h.o.a + 1;
            h.o.b = (bit<32>)hi;
        }
    }
    // k from 2 to n inclusive; return inside the loop leaves the action once k reaches 9
    action range_sum() {
        for (bit<8> k = 2; k <= h.i.n; k = k + 1) {
            if (k == 9) { return; }
            h.o.a = h.o.a + (bit<32>)k;
            h.o.b = h.o.b + 1;
        }
        h.o.b = h.o.b + 100;
    }
    apply {
        h.o.setValid();
        h.o.a = 0;
        h.o.b = 0;
        if (h.i.mode == 0) { sum_to_n(); }
        else if (h.i.mode == 1) { odd_until_seven(); }
        else if (h.i.mode == 2) { nested(); }
        else if (h.i.mode == 3) { meet(); }
        else if (h.i.mode == 4) { range_sum(); }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.i); pkt.emit(h.o); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
