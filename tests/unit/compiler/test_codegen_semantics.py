"""Code generator semantics, run through the generated module directly: BMv2's integer rules at every width,
header validity, stacks, parser errors and select, tables with const entries, registers and other externs."""

from __future__ import annotations

import struct

import pytest
from compiler_support import Harness, build, program

OPS = "header ops_t { bit<8> a; bit<8> b; int<8> s; int<8> t; bit<32> w; bit<8> sh; }"
RES = "header res_t { bit<8> r0; bit<8> r1; bit<8> r2; bit<8> r3; bit<16> r4; bit<32> r5; }"


def arith(ingress: str, ingress_locals: str = "") -> Harness:
    return build(program(
        decls=f"{OPS} {RES} struct headers_t {{ ops_t ops; res_t res; }}",
        parser="state start { pkt.extract(h.ops); transition accept; }",
        ingress="h.res.setValid(); " + ingress,
        ingress_locals=ingress_locals,
        deparser="pkt.emit(h.ops); pkt.emit(h.res);",
    ))


def ops(a: int = 0, b: int = 0, s: int = 0, t: int = 0, w: int = 0, sh: int = 0) -> bytes:
    return struct.pack(">BBbbIB", a, b, s, t, w, sh)


def test_unsigned_wraparound_and_saturation() -> None:
    h = arith("h.res.r0 = h.ops.a + h.ops.b; h.res.r1 = h.ops.a - h.ops.b; h.res.r2 = h.ops.a |+| h.ops.b; "
              "h.res.r3 = h.ops.b |-| h.ops.a; h.res.r5 = h.ops.w * 3;")
    res = h.run(ops(a=200, b=100, w=0x80000001)).h.res
    assert (res.r0, res.r1, res.r2, res.r3, res.r5) == (44, 100, 255, 0, 0x80000003)


def test_signed_arithmetic_comparison_and_saturation() -> None:
    h = arith("int<8> x = h.ops.s |+| h.ops.t; h.res.r0 = (bit<8>) x; "
              "h.res.r1 = (bit<8>) (h.ops.s |-| h.ops.t); "
              "h.res.r2 = (h.ops.s < h.ops.t) ? 8w1 : 8w0; "
              "h.res.r3 = (bit<8>) (h.ops.s >> 2); "
              "h.res.r4 = (bit<16>) (int<16>) h.ops.s;")
    res = h.run(ops(s=-100, t=100)).h.res
    assert res.r0 == 0  # -100 + 100
    assert res.r1 == 0x80  # -200 saturates to -128
    assert res.r2 == 1  # signed comparison
    assert res.r3 == (-25) & 0xFF  # arithmetic shift
    assert res.r4 == (-100) & 0xFFFF  # sign extension
    res = h.run(ops(s=100, t=100)).h.res
    assert res.r0 == 127  # saturates at the top


def test_shifts_by_width_or_more_give_zero() -> None:
    h = arith("h.res.r0 = h.ops.a << h.ops.sh; h.res.r1 = h.ops.a >> h.ops.sh; h.res.r5 = h.ops.w << 4; "
              "h.res.r2 = (bit<8>) (h.ops.s >> h.ops.sh);")
    res = h.run(ops(a=0xFF, s=-1, w=0xF0000001, sh=9)).h.res
    assert (res.r0, res.r1, res.r2) == (0, 0, 0xFF)
    assert res.r5 == 0x00000010
    res = h.run(ops(a=0x81, sh=1)).h.res
    assert (res.r0, res.r1) == (0x02, 0x40)


def test_slices_concatenation_and_casts() -> None:
    h = arith("h.res.r0 = h.ops.w[31:24]; h.res.r4 = h.ops.a ++ h.ops.b; h.res.r1 = (bit<8>) h.ops.w; "
              "h.res.r2 = 0; h.res.r2[3:0] = h.ops.a[7:4]; h.res.r3 = ~h.ops.a; h.res.r5 = -h.ops.w;")
    res = h.run(ops(a=0xAB, b=0xCD, w=0x12345678)).h.res
    assert (res.r0, res.r4, res.r1, res.r2, res.r3) == (0x12, 0xABCD, 0x78, 0x0A, 0x54)
    assert res.r5 == (-0x12345678) & 0xFFFFFFFF


def test_constant_folding_and_uninitialized_locals() -> None:
    h = arith("const bit<8> K = 3 * 4 + 1; bit<8> u; h.res.r0 = K; h.res.r1 = u; "
              "h.res.r2 = (bit<8>) (16w0xFFFF + 2); h.res.r3 = 8w255 + 8w2;")
    res = h.run(ops()).h.res
    assert (res.r0, res.r1, res.r2, res.r3) == (13, 0, 1, 1)


def test_exit_and_return_end_processing() -> None:
    h = arith("h.res.r0 = 1; if (h.ops.a == 1) { exit; } h.res.r1 = 2; if (h.ops.a == 2) { return; } h.res.r2 = 3;")
    assert (h.run(ops(a=1)).h.res.r1, h.run(ops(a=2)).h.res.r2, h.run(ops(a=3)).h.res.r2) == (0, 0, 3)


def test_actions_with_directional_parameters() -> None:
    h = arith("bump(h.res.r0, 5); swap(h.res.r1, h.res.r2);",
              ingress_locals="action bump(inout bit<8> v, bit<8> by) { v = v + by; } "
                             "action swap(out bit<8> x, inout bit<8> y) { x = y; y = 9; }")
    res = h.run(ops()).h.res
    assert (res.r0, res.r1, res.r2) == (5, 0, 9)


def test_header_validity_emit_and_assignment() -> None:
    decls = "header a_t { bit<8> x; } header b_t { bit<16> y; } struct headers_t { a_t a; b_t b; b_t c; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.a); transition select(h.a.x) { 1: bb; default: accept; } } "
               "state bb { pkt.extract(h.b); transition accept; }",
        ingress="if (h.a.x == 1) { h.c = h.b; h.c.y = h.c.y + 1; h.b.setInvalid(); } "
                "else { h.b.y = 7; h.c.setValid(); }",
        deparser="pkt.emit(h.a); pkt.emit(h.b); pkt.emit(h.c);",
    ))
    assert h.run(b"\x01\x00\x10rest").out == b"\x01\x00\x11rest"
    # writing a field of an invalid header does not make it valid; setValid keeps the (zero) fields
    assert h.run(b"\x02\x00\x10").out == b"\x02\x00\x00\x00\x10"


def test_header_stack_parsing_and_errors() -> None:
    decls = "header l_t { bit<7> v; bit<1> bos; } header o_t { bit<8> n; bit<8> last; } " \
            "struct headers_t { l_t[2] ls; o_t o; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.ls.next); transition select(h.ls.last.bos) { 1: accept; "
               "default: start; } }",
        ingress="h.o.setValid(); h.o.n = (bit<8>) h.ls.lastIndex; h.o.last = (bit<8>) h.ls[0].v; "
                "if (sm.parser_error == error.StackOutOfBounds) { h.o.last = 99; }",
        deparser="pkt.emit(h.o); pkt.emit(h.ls);",
    ))
    r = h.run(bytes([0x04, 0x03]))
    assert r.sm.parser_error == 0 and r.out == bytes([1, 2, 0x04, 0x03])
    r = h.run(bytes([0x04, 0x04, 0x04]))  # a third label overflows the stack
    assert r.sm.parser_error == 3  # StackOutOfBounds
    r = h.run(bytes([0x04]))  # runs out of bytes
    assert r.sm.parser_error == 1  # PacketTooShort


def test_stack_push_and_pop() -> None:
    decls = "header l_t { bit<8> v; } struct headers_t { l_t[3] ls; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.ls.next); pkt.extract(h.ls.next); transition accept; }",
        ingress="h.ls.push_front(1); h.ls[0].setValid(); h.ls[0].v = 9; h.ls.pop_front(2);",
        deparser="pkt.emit(h.ls);",
    ))
    assert h.run(bytes([1, 2])).out == bytes([2])


def test_select_masks_ranges_tuples_and_no_match() -> None:
    decls = "header k_t { bit<8> a; bit<16> b; } header o_t { bit<8> path; } struct headers_t { k_t k; o_t o; }"
    h = build(program(
        decls=decls,
        meta="bit<8> path;",
        parser="state start { pkt.extract(h.k); transition select(h.k.a, h.k.b) { "
               "(1, 0x0100 &&& 0xFF00): s1; (1, 0x0200 .. 0x02FF): s2; (2, _): s3; (3, 5): s4; } } "
               "state s1 { m.path = 1; transition accept; } state s2 { m.path = 2; transition accept; } "
               "state s3 { m.path = 3; transition accept; } state s4 { verify(false, error.NoMatch); "
               "transition accept; }",
        ingress="h.o.setValid(); h.o.path = m.path;",
        deparser="pkt.emit(h.o);",
    ))
    assert h.run(b"\x01\x01\x77").m.path == 1
    assert h.run(b"\x01\x02\x99").m.path == 2
    assert h.run(b"\x02\xff\xff").m.path == 3
    r = h.run(b"\x09\x00\x00")
    assert (r.m.path, r.sm.parser_error) == (0, 2)  # NoMatch, and v1model goes on into ingress
    assert h.run(b"\x03\x00\x05").sm.parser_error == 2


def test_lookahead_and_advance() -> None:
    decls = "header o_t { bit<8> peek; bit<8> after; } struct headers_t { o_t o; }"
    h = build(program(
        decls=decls,
        meta="bit<8> peek;",
        parser="state start { m.peek = pkt.lookahead<bit<8>>(); pkt.advance(16); transition accept; }",
        ingress="h.o.setValid(); h.o.peek = m.peek;",
        deparser="pkt.emit(h.o);",
    ))
    assert h.run(b"\xaa\xbb\xcc").out == b"\xaa\x00\xcc"
    assert h.run(b"\xaa").sm.parser_error == 1


TABLES = """
    action set(bit<8> v) { h.o.r = v; }
    action miss_mark() { h.o.f = 1; }
    table t {
        key = { h.k.a : ternary; h.k.b : exact; }
        actions = { set; miss_mark; }
        const entries = {
            (0x10 &&& 0xF0, 1) : set(1);
            (0x11, 1) : set(2);
            (_, 2) : set(3);
        }
        default_action = miss_mark();
    }
"""


def test_const_entries_match_in_source_order_with_hit_and_switch() -> None:
    decls = "header k_t { bit<8> a; bit<8> b; } header o_t { bit<8> r; bit<8> f; bit<8> s; } " \
            "struct headers_t { k_t k; o_t o; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.k); transition accept; }",
        ingress_locals=TABLES,
        ingress="h.o.setValid(); switch (t.apply().action_run) { set: { h.o.s = 1; } miss_mark: { h.o.s = 2; } }",
        deparser="pkt.emit(h.o);",
    ))
    assert h.run(b"\x11\x01").out == b"\x01\x00\x01"  # the earlier entry wins
    assert h.run(b"\x99\x02").out == b"\x03\x00\x01"
    assert h.run(b"\x99\x05").out == b"\x00\x01\x02"


def test_registers_counters_and_out_of_range_index() -> None:
    decls = "header r_t { bit<8> idx; bit<32> val; bit<32> before; } struct headers_t { r_t r; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.r); transition accept; }",
        ingress_locals="register<bit<32>>(4) acc; counter(4, CounterType.packets) c;",
        ingress="bit<32> v = 0xDEAD; acc.read(v, (bit<32>) h.r.idx); h.r.before = v; "
                "acc.write((bit<32>) h.r.idx, v + h.r.val); c.count((bit<32>) h.r.idx);",
        deparser="pkt.emit(h.r);",
    ))
    h.run(bytes([1]) + struct.pack(">II", 5, 0))
    r = h.run(bytes([1]) + struct.pack(">II", 7, 0))
    assert r.h.r.before == 5
    assert h.state.registers["I.acc"].cells == [0, 12, 0, 0]
    r = h.run(bytes([9]) + struct.pack(">II", 7, 0))  # out of range: read leaves v alone, write is ignored
    assert r.h.r.before == 0xDEAD
    assert h.state.registers["I.acc"].cells == [0, 12, 0, 0]
    assert h.state.counters["I.c"].packets == [0, 2, 0, 0]


def test_hash_digest_and_log() -> None:
    decls = "header a_t { bit<32> x; bit<16> hv; } struct headers_t { a_t a; } struct d_t { bit<32> x; bit<8> y; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.a); transition accept; }",
        ingress="hash(h.a.hv, HashAlgorithm.csum16, 16w0, { h.a.x }, 17w65536); "
                "digest<d_t>(1, { h.a.x, 8w7 }); log_msg(\"x={}\", { h.a.x });",
        deparser="pkt.emit(h.a);",
    ))
    r = h.run(struct.pack(">IH", 0x01020304, 0))
    assert r.h.a.hv == (~(0x0102 + 0x0304)) & 0xFFFF
    assert h.digests == [("d_t", (0x01020304, 7))]
    assert h.logs == [f"x={0x01020304}"]


def test_mark_to_drop_and_egress_spec() -> None:
    h = arith("sm.egress_spec = 3; sm.mcast_grp = 4; if (h.ops.a == 1) { mark_to_drop(sm); }")
    r = h.run(ops(a=1))
    assert (r.sm.egress_spec, r.sm.mcast_grp) == (511, 0)
    assert h.run(ops(a=0)).sm.egress_spec == 3


@pytest.mark.parametrize("text", ["h.res.r0 = (bit<8>) (h.ops.w >> 40);", "h.res.r5 = h.ops.w >> 32;"])
def test_constant_shift_beyond_width(text: str) -> None:
    res = arith(text).run(ops(w=0xFFFFFFFF)).h.res
    assert (res.r0, res.r5) == (0, 0)


def test_division_by_powers_of_two_and_constants() -> None:
    res = arith("h.res.r0 = h.ops.a / 4; h.res.r1 = h.ops.a % 8; h.res.r2 = 8w100 / 7;").run(ops(a=77)).h.res
    assert (res.r0, res.r1, res.r2) == (19, 5, 14)


def test_set_valid_zeroes_an_invalid_header_only() -> None:
    decls = "header a_t { bit<8> x; } header b_t { bit<8> y; } struct headers_t { a_t a; b_t b; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.a); transition accept; }",
        ingress="h.b.y = 7; h.b.setValid(); h.a.x = h.a.x + 1; h.a.setValid();",
        deparser="pkt.emit(h.a); pkt.emit(h.b);",
    ))
    assert h.run(b"\x05").out == b"\x06\x00"  # b's stale 7 is reset by add_header; a stays as written


def test_deprecated_resubmit_and_clone3_preserve_the_listed_metadata() -> None:
    h = build(program(
        decls="header a_t { bit<8> x; } struct headers_t { a_t a; }",
        meta="bit<8> keep; bit<8> lost;",
        parser="state start { pkt.extract(h.a); transition accept; }",
        ingress="m.keep = 1; m.lost = 2; resubmit({ m.keep }); clone3(CloneType.I2E, 32w3, m);",
        deparser="pkt.emit(h.a);",
    ))
    r = h.run(b"\x01")
    assert r.ctx.resubmit_field_list is not None
    assert h.program.save_field_list(r.ctx, r.ctx.resubmit_field_list) == (("keep", 1),)
    (ctype, session, field_list), = r.ctx.clone_requests
    assert (ctype, session) == (0, 3)
    assert h.program.save_field_list(r.ctx, field_list) == (("keep", 1), ("lost", 2))


def test_varbit_extract_emit_and_errors() -> None:
    decls = "header v_t { bit<4> ver; bit<4> words; varbit<32> opts; } header o_t { bit<8> e; } " \
            "struct headers_t { v_t v; o_t o; }"
    h = build(program(
        decls=decls,
        parser="state start { pkt.extract(h.v, (bit<32>) (pkt.lookahead<bit<8>>() & 0x0F) * 8); transition accept; }",
        ingress="h.o.setValid(); if (sm.parser_error == error.HeaderTooShort) { h.o.e = 1; }",
        deparser="pkt.emit(h.v); pkt.emit(h.o);",
    ))
    assert h.run(b"\x42\xaa\xbbPAY").out == b"\x42\xaa\xbb\x00PAY"  # 2 option bytes kept, then o, then payload
    assert h.run(b"\x40PAY").out == b"\x40\x00PAY"
    r = h.run(b"\x45" + bytes(8))  # 5 words > varbit<32>
    assert r.sm.parser_error == 4 and r.out.startswith(b"\x01")
    assert h.run(b"\x43\xaa").sm.parser_error == 1  # PacketTooShort


def test_a_parser_loop_that_consumes_nothing_ends_with_parser_timeout() -> None:
    h = build(program(
        decls="header a_t { bit<8> x; } struct headers_t { a_t a; }",
        parser="state start { transition select(pkt.lookahead<bit<8>>()) { 0: start; default: parse; } } "
               "state parse { pkt.extract(h.a); transition accept; }",
        ingress="",
        deparser="pkt.emit(h.a);",
    ))
    assert h.run(b"\x00\x01").sm.parser_error == 5  # ParserTimeout
    assert h.run(b"\x07").out == b"\x07"


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 9, 12])
def test_for_in_over_an_inclusive_range_with_return(n: int) -> None:
    """P4_16 1.2.5 `for (T x in lo .. hi)`: x takes lo, lo+1, ..., hi (none when hi < lo); `return` leaves the
    action. p4c's BMv2 back end rejects `for`-in (bmv2limits does too), so it is built without the p4c checks."""
    h = build(program(
        decls="header i_t { bit<8> n; } header o_t { bit<32> a; bit<32> b; } struct headers_t { i_t i; o_t o; }",
        parser="state start { pkt.extract(h.i); transition accept; }",
        ingress_locals="action range_sum() { for (bit<8> k in 2 .. h.i.n) { if (k == 9) { return; } "
                       "h.o.a = h.o.a + (bit<32>)k; h.o.b = h.o.b + 1; } h.o.b = h.o.b + 100; }",
        ingress="h.o.setValid(); h.o.a = 0; h.o.b = 0; range_sum();",
        deparser="pkt.emit(h.i); pkt.emit(h.o);",
    ), p4c_checks=False)
    ks = list(range(2, n + 1))
    stopped = 9 in ks
    ks = ks[:ks.index(9)] if stopped else ks
    want_a, want_b = sum(ks), len(ks) + (0 if stopped else 100)
    assert h.run(bytes([n])).out == bytes([n]) + struct.pack(">II", want_a, want_b)
