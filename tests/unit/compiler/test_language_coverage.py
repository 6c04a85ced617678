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


def test_compound_assignment_to_a_call_indexed_lvalue_is_refused() -> None:
    text = program(
        decls=f"{OPS} struct headers_t {{ ops_t ops; ops_t[2] st; }} bit<32> one() {{ return 1; }}",
        parser="state start { pkt.extract(h.ops); transition accept; }",
        ingress="h.st[one()].a += 1;",
    )
    with pytest.raises(CompileError, match="compound assignment"):
        build(text)
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
