"""P4_16 constructs the embedded compiler gained for p4c's sample corpus (issue 16): compound assignments, nested
slices as l-values, `_` for out arguments, evaluation order and copy-in/copy-out, header and stack equality,
sub-parsers on stack elements, lookahead of headers and structs, const-entry priorities. Expected values follow the
P4_16 specification (section numbers in each test) and are computed here by plain Python."""

from __future__ import annotations

import struct

import pytest
from compiler_support import Harness, build, program

from p4switch.exceptions import CompileError

OPS = "header ops_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; int<8> s; }"


def ops_program(ingress: str, ingress_locals: str = "", decls: str = "") -> Harness:
    return build(program(
        decls=f"{OPS} {decls} struct headers_t {{ ops_t ops; }}",
        parser="state start { pkt.extract(h.ops); transition accept; }",
        ingress=ingress,
        ingress_locals=ingress_locals,
        deparser="pkt.emit(h.ops);",
    ))


def ops(a: int = 0, b: int = 0, c: int = 0, w: int = 0, s: int = 0) -> bytes:
    return struct.pack(">BBHIb", a, b, c, w, s)


def test_compound_assignments_are_the_binary_operators() -> None:
    # P4_16 1.2.5, 12.1: `a op= b` is `a = a op b` for the arithmetic, bitwise, shift and saturating operators
    h = ops_program("h.ops.a += 1; h.ops.b -= 7; h.ops.c *= 3; h.ops.w |= 0x100; h.ops.w &= 0xFFF0FF; "
                    "h.ops.w ^= 0x3; h.ops.s |-|= 100; h.ops.c <<= 2; h.ops.c >>= 1; h.ops.a |+|= 250;")
    for a, b, c, w, s in ((1, 2, 3, 0x12345678, -100), (200, 9, 0xFFFF, 0, 0)):
        res = h.run(ops(a, b, c, w, s)).h.ops
        a2 = min((a + 1) % 256 + 250, 255)
        c2 = ((((c * 3) & 0xFFFF) << 2) & 0xFFFF) >> 1
        w2 = ((w | 0x100) & 0xFFF0FF) ^ 0x3
        s2 = max(s - 100, -128) & 0xFF
        assert (res.a, res.b, res.c, res.w, res.s) == (a2, (b - 7) % 256, c2, w2, s2)


def test_compound_division_modulo_and_spacing() -> None:
    # a power-of-two divisor is what p4c accepts outside constants (it becomes a shift and a mask)
    h = ops_program("h.ops.a /= 4; h.ops.b %= 8; h.ops.w >>= h.ops.b; h.ops.c = 7; h.ops.c -= 16w0xFFFF;")
    res = h.run(ops(a=203, b=13, w=0x80)).h.ops
    assert (res.a, res.b, res.w, res.c) == (50, 5, 0x80 >> 5, 8)
    with pytest.raises(CompileError):  # `+ =` is not an operator
        ops_program("h.ops.a + = 1;")


def test_compound_assignment_on_locals_and_stack_elements() -> None:
    h = build(program(
        decls=f"{OPS} struct headers_t {{ ops_t ops; ops_t[2] st; }}",
        parser="state start { pkt.extract(h.ops); transition accept; }",
        ingress="bit<8> n = h.ops.a; n += 3; n *= 2; h.ops.b ^= n; h.st[1].setValid(); h.st[1].c += h.ops.c; "
                "h.st[1].c += 1; h.ops.c = h.st[1].c;",
        deparser="pkt.emit(h.ops);",
    ))
    res = h.run(ops(a=4, b=0xF0, c=0x1234)).h.ops
    assert (res.b, res.c) == (0xF0 ^ 14, 0x1235)


def test_compound_assignment_evaluates_a_call_in_the_lvalue_once() -> None:
    h = build(program(
        decls=f"{OPS} struct headers_t {{ ops_t ops; ops_t[2] st; }} "
              "bit<32> bump(inout bit<8> v) { v = v + 1; return (bit<32>) v; }",
        parser="state start { pkt.extract(h.ops); transition accept; }",
        ingress="h.st[0].setValid(); h.st[1].setValid(); h.st[1].b = 40; h.st[bump(h.ops.a)].b += 2;",
        deparser="pkt.emit(h.ops); pkt.emit(h.st);",
    ))
    r = h.run(ops(a=0))
    assert (r.h.ops.a, r.h.st.e[1].b, r.h.st.e[0].b) == (1, 42, 0)  # bump ran once: index 1, read and written
    h = ops_program("h.ops.w[15:8] += 1;")
    assert h.run(ops(w=0x1FF00)).h.ops.w == 0x10000  # the slice wraps inside its 8 bits


def test_nested_slice_assignment() -> None:
    # 8.6: a slice of an l-value is an l-value, also a slice of a slice
    h = ops_program("h.ops.w[23:8][11:4] = 0xAB; h.ops.c[15:8][3:0][1:0] = 2w1;")
    res = h.run(ops(c=0xFFFF, w=0xFFFFFFFF)).h.ops
    assert res.w == (0xFFFFFFFF & ~(0xFF << 12)) | (0xAB << 12)
    assert res.c == (0xFFFF & ~(0x3 << 8)) | (0x1 << 8)


def test_dont_care_out_argument_discards_the_value() -> None:
    # 6.7: `_` as an out argument: the value written by the callee is dropped
    h = ops_program("set2(_, h.ops.b); set2(h.ops.a, _); set2(_, _); inc(_, h.ops.c);",
                    "action set2(out bit<8> x, out bit<8> y) { x = 5; y = 6; } "
                    "action inc(out bit<8> x, inout bit<16> y) { x = 1; y = y + 1; }")
    res = h.run(ops(a=9, b=20, c=7)).h.ops
    assert (res.a, res.b, res.c) == (5, 6, 8)


SUBPARSER = """
parser Sub(packet_in p, out ops_t o, inout bit<8> count, in bit<8> limit) {
    state start { p.extract(o); count = count + 1; transition select(o.a) { 0xFF: reject; default: check; } }
    state check { verify(o.b <= limit, error.HeaderTooShort); transition accept; }
}
"""


# core.p4 declares NoError, PacketTooShort, NoMatch, StackOutOfBounds, HeaderTooShort, ...; BMv2 numbers them in order
PACKET_TOO_SHORT, HEADER_TOO_SHORT = 1, 4


def subparser_program() -> Harness:
    return build(program(
        decls=f"{OPS} {SUBPARSER} struct headers_t {{ ops_t ops; ops_t[2] st; }}",
        meta="bit<8> n;",
        parser="Sub() sp; state start { sp.apply(pkt, h.st[0], m.n, 10); "
               "transition select(h.st[0].a) { 1: more; default: accept; } } "
               "state more { sp.apply(pkt, h.st[1], m.n, 20); transition accept; }",
        ingress="h.ops.setValid(); h.ops.a = m.n; h.ops.b = (bit<8>) (bit<1>) h.st[1].isValid();",
        deparser="pkt.emit(h.st); pkt.emit(h.ops);",
    ))


def element(a: int, b: int) -> bytes:
    return ops(a=a, b=b, c=0x0102, w=0x03040506, s=7)


def test_subparser_extracts_into_stack_elements_at_the_callers_cursor() -> None:
    # P4_16 13.8.1: a parser may apply another parser; it continues where the caller stopped and returns there
    h = subparser_program()
    frame = element(1, 5) + element(2, 15) + b"\xee"
    r = h.run(frame)
    assert r.sm.parser_error == 0
    assert r.out == element(1, 5) + element(2, 15) + bytes([2, 1]) + bytes(7) + b"\xee"
    r = h.run(element(3, 5) + element(2, 15))
    assert (r.h.ops.a, r.h.ops.b) == (1, 0)  # one call: the count came back through inout, st[1] never parsed


def test_subparser_errors_and_reject_stop_the_whole_parser() -> None:
    h = subparser_program()
    r = h.run(element(1, 5) + element(2, 25))  # verify fails in the second call
    assert r.sm.parser_error == HEADER_TOO_SHORT
    r = h.run(element(1, 5) + element(2, 5)[:4])  # packet too short inside the sub-parser
    assert r.sm.parser_error == PACKET_TOO_SHORT
    r = h.run(element(0xFF, 5) + element(2, 5))  # the sub-parser rejects: the top-level parser stops there
    assert r.sm.parser_error == 0 and r.h.ops.a == 0 and not r.h.st.e[1]._v


def priority_table(entries: str, properties: str = "") -> Harness:
    return ops_program(
        "t.apply();",
        "action s(bit<8> v) { h.ops.b = v; } "
        f"table t {{ key = {{ h.ops.a : ternary; }} actions = {{ s; }} {properties} entries = {{ {entries} }} }}",
    )


def winners(h: Harness, keys: tuple[int, ...] = (0x01, 0x11, 0x21)) -> list[int]:
    return [h.run(ops(a=k)).h.ops.b for k in keys]


OVERLAP = "priority = {p1}: 0x01 &&& 0x0F : s(1); {p2}0x11 &&& 0xFF : s(2); priority = {p3}: 0x21 &&& 0xFF : s(3);"


def test_entry_priorities_largest_wins_by_default() -> None:
    # 14.2.1.4: with largest_priority_wins (default true) the larger priority wins whatever the source order
    h = priority_table(OVERLAP.format(p1=1, p2="priority = 2: ", p3=3))
    assert winners(h) == [1, 2, 3]
    # an entry without a priority takes the previous one's minus priority_delta (1): here 9, below the first
    h = priority_table(OVERLAP.format(p1=10, p2="", p3=30))
    assert winners(h) == [1, 1, 3]


def test_entry_priorities_smallest_wins_and_delta() -> None:
    h = priority_table(OVERLAP.format(p1=1, p2="priority = 2: ", p3=3), "largest_priority_wins = false;")
    assert winners(h) == [1, 1, 1]
    h = priority_table(OVERLAP.format(p1=20, p2="", p3=12), "largest_priority_wins = false; priority_delta = 10;")
    assert winners(h) == [1, 1, 3]  # entry 2 gets 30: 0x11 -> entry 1 (20); 0x21 -> entry 3 (12) beats entry 1
    # key 0x11 matches the second (no explicit priority) and the third entry only
    race = "priority = 10: 0x02 &&& 0x0F : s(1); 0x11 &&& 0xFF : s(2); priority = 7: 0x10 &&& 0xF0 : s(3);"
    assert winners(priority_table(race), (0x11,)) == [2]  # 10 - 1 = 9 beats 7
    assert winners(priority_table(race, "priority_delta = 5;"), (0x11,)) == [3]  # 10 - 5 = 5 loses to 7
    assert winners(priority_table(race, "largest_priority_wins = false;"), (0x11,)) == [3]  # 11 loses to 7


def test_entry_priority_rules_are_checked() -> None:
    with pytest.raises(CompileError, match="first entry must have a priority"):
        priority_table("0x01 &&& 0x0F : s(1); priority = 3: 0x11 &&& 0xFF : s(2);")
    with pytest.raises(CompileError, match="overflow in priority computation"):
        priority_table("priority = 10: 0x01 &&& 0x0F : s(1); 0x11 &&& 0xFF : s(2);", "priority_delta = 20;")
    with pytest.raises(CompileError, match="priority_delta must be a positive constant"):
        priority_table("priority = 10: 0x01 &&& 0x0F : s(1);", "priority_delta = 0;")


def test_lookahead_of_header_and_struct_types() -> None:
    # 12.8.2: lookahead<T>() returns the next bits as a T (a header comes back valid) without consuming them
    h = build(program(
        decls="header two_t { bit<4> x; bit<12> y; } struct pair_t { bit<8> p; bool f; bit<3> q; } "
              "header out_t { bit<8> p; bit<8> f; bit<8> q; bit<8> v; } struct headers_t { two_t two; out_t o; }",
        meta="bit<8> p; bool f; bit<3> q; bit<8> v;",
        parser="state start { two_t t = pkt.lookahead<two_t>(); pair_t pr = pkt.lookahead<pair_t>(); "
               "m.p = pr.p; m.f = pr.f; m.q = pr.q; m.v = t.isValid() ? (bit<8>) t.x : 8w0xEE; "
               "transition select(t.y) { 0x234: take; default: accept; } } "
               "state take { pkt.extract(h.two); transition accept; }",
        ingress="h.o.setValid(); h.o.p = m.p; h.o.f = m.f ? 8w1 : 8w0; h.o.q = (bit<8>) m.q; h.o.v = m.v;",
        deparser="pkt.emit(h.two); pkt.emit(h.o);",
    ))
    r = h.run(b"\x12\x34\xaa")
    assert r.sm.parser_error == 0
    # pair_t from 0x1234: p = 0x12, f = bit 7 of 0x34 (0), q = the next three bits (011)
    assert r.out == b"\x12\x34" + bytes([0x12, 0, 3, 1]) + b"\xaa"
    r = h.run(b"\x1f\xb4")  # y = 0xfb4: no extract, the bytes stay payload; f = 1, q = 0b011
    assert r.out == bytes([0x1F, 1, 3, 1]) + b"\x1f\xb4"
    assert h.run(b"\x12").sm.parser_error == PACKET_TOO_SHORT


EQ_DECLS = ("header e_t { bit<8> a; bit<8> b; } header_union u_t { e_t x; e_t y; } "
            "struct headers_t { e_t p; e_t q; e_t[2] s1; e_t[2] s2; u_t u1; u_t u2; e_t res; }")


def test_header_stack_and_union_equality() -> None:
    # 8.17 (headers: both invalid, or both valid with equal fields), 8.18 (stacks: element-wise), unions likewise
    h = build(program(
        decls=EQ_DECLS,
        parser="state start { pkt.extract(h.p); pkt.extract(h.q); transition accept; }",
        ingress="h.res.setValid(); bit<8> r = 0; "
                "if (h.p == h.q) { r = r | 1; } if (h.p != h.q) { r = r | 2; } "
                "if (h.s1 == h.s2) { r = r | 4; } "  # both stacks all invalid
                "h.s1[0] = h.p; h.s2[0] = h.q; if (h.s1 == h.s2) { r = r | 8; } "
                "h.s1.push_front(1); if (h.s1 != h.s2) { r = r | 16; } "
                "if (h.u1 == h.u2) { r = r | 32; } h.u1.x = h.p; h.u2.y = h.p; if (h.u1 == h.u2) { r = r | 64; } "
                "e_t inv; if (inv == h.res) { r = r | 128; } h.res.a = r;",
        deparser="pkt.emit(h.res);",
    ))
    assert h.run(b"\x01\x02\x01\x02").out == bytes([1 | 4 | 8 | 16 | 32, 0])
    assert h.run(b"\x01\x02\x01\x03").out == bytes([2 | 4 | 16 | 32, 0])


def test_serializable_enum_keys_with_masks_in_const_entries() -> None:
    h = ops_program(
        "t.apply();",
        "action s(bit<8> v) { h.ops.b = v; } "
        "table t { key = { h.ops.a : ternary; } actions = { s; } "
        "const entries = { E.B &&& 0xF0 : s(2); E.A &&& 0x0F : s(1); (E) 0x30 : s(3); } }",
        "enum bit<8> E { A = 0x01, B = 0x21, C = 0x30 }",
    )
    # 0x21 &&& 0xF0 matches 0x2X; 0x01 &&& 0x0F matches 0xX1 (the first entry wins where both do)
    assert [h.run(ops(a=k)).h.ops.b for k in (0x25, 0x21, 0x31, 0x30, 0x40)] == [2, 2, 1, 3, 0]


def test_lvalue_index_before_rhs_and_copy_back_left_to_right() -> None:
    h = build(program(
        decls=f"{OPS} struct headers_t {{ ops_t ops; ops_t[2] st; }} "
              "bit<8> bump(inout bit<8> v) { v = v + 1; return v; }",
        parser="state start { pkt.extract(h.ops); transition accept; }",
        ingress_locals="action both(inout bit<8> p, inout bit<8> q) { p = 1; q = 2; }",
        ingress="h.st[0].setValid(); h.st[1].setValid(); h.st[h.ops.a].b = bump(h.ops.a); both(h.ops.b, h.ops.b);",
        deparser="pkt.emit(h.ops); pkt.emit(h.st);",
    ))
    r = h.run(ops(a=0))
    # 6.7/8.22: the index (0) is evaluated before the call bumps h.ops.a; 6.8: copy-out left to right, q last
    assert (r.h.st.e[0].b, r.h.st.e[1].b, r.h.ops.a, r.h.ops.b) == (1, 0, 1, 2)


def test_out_argument_lvalue_is_located_at_the_call() -> None:
    # 6.8: the argument's l-value is evaluated when the call is made; copy-out writes there even if the call
    # changed the index meanwhile
    h = build(program(
        decls=f"{OPS} struct headers_t {{ ops_t ops; ops_t[2] st; }}",
        parser="state start { pkt.extract(h.ops); transition accept; }",
        ingress_locals="action move(inout bit<8> i, out bit<8> r) { i = 1; r = 9; }",
        ingress="h.st[0].setValid(); h.st[1].setValid(); move(h.ops.a, h.st[h.ops.a].b);",
        deparser="pkt.emit(h.ops); pkt.emit(h.st);",
    ))
    r = h.run(ops(a=0))
    assert (r.h.st.e[0].b, r.h.st.e[1].b, r.h.ops.a) == (9, 0, 1)


def test_division_of_what_p4c_folds_to_a_constant() -> None:
    # p4c's strength reduction: x * 0 and x & 0 are 0, so dividing them is constant folding, not run-time division
    h = ops_program("h.ops.b = h.ops.a * 0 / 3; h.ops.c = (h.ops.c & 0) % 7 + 16w300 / 7; h.ops.w = h.ops.w / 1;")
    res = h.run(ops(a=203, b=1, c=0xFFFF, w=77)).h.ops
    assert (res.b, res.c, res.w) == (0, 300 // 7, 77)
    with pytest.raises(CompileError, match="division and modulo need compile-time constants"):
        ops_program("h.ops.b = h.ops.a / 3;")


def test_priority_annotation_as_the_bmv2_back_end_writes_it() -> None:
    # p4c's BMv2 JSON: @priority(N) is the entry's BMv2 priority, other entries their position from 1; smaller wins
    h = priority_table("@priority(4) 0x01 &&& 0x0F : s(1); @priority(2) 0x11 &&& 0xFF : s(2); "
                       "0x21 &&& 0xFF : s(3);")
    assert winners(h) == [1, 2, 3]  # 0x11: 2 beats 4; 0x21: position 3 beats 4
    with pytest.raises(CompileError, match="invalid @priority"):
        priority_table('@priority("x") 0x01 &&& 0x0F : s(1);')


def test_subparser_out_struct_starts_with_invalid_headers() -> None:
    # 6.8: an out argument is uninitialized in the callee; its headers are invalid until the callee validates them
    h = build(program(
        decls=f"{OPS} struct pair_t {{ ops_t x; ops_t y; }} "
              "parser Sub(packet_in p, out pair_t o) { state start { p.extract(o.y); transition accept; } } "
              "struct headers_t { ops_t ops; pair_t pr; }",
        parser="Sub() sp; state start { pkt.extract(h.ops); h.pr.x.setValid(); h.pr.y.setValid(); "
               "sp.apply(pkt, h.pr); transition accept; }",
        ingress="h.ops.a = h.pr.x.isValid() ? 8w1 : 8w0; h.ops.b = h.pr.y.isValid() ? 8w1 : 8w0;",
        deparser="pkt.emit(h.ops);",
    ))
    r = h.run(ops(a=7, b=7) + ops(a=2))
    assert (r.h.ops.a, r.h.ops.b, r.h.pr.y.a) == (0, 1, 2)
