"""Negative programs: each must fail with a p4c-like, located diagnostic (file:line:col, message, source line)."""

from __future__ import annotations

import pytest
from compiler_support import program

from p4switch.compiler import compile_text
from p4switch.exceptions import CompileError

HEADERS = "header a_t { bit<8> x; bit<16> y; int<8> s; } struct headers_t { a_t a; a_t[2] st; }"
PARSER = "state start { pkt.extract(h.a); transition accept; }"

CASES = {
    "width_mismatch": ({"ingress": "h.a.x = h.a.y;"}, 12, 21,
                       "assignment: cannot cast implicitly type 'bit<16>' to type 'bit<8>'"),
    "operand_widths": ({"ingress": "h.a.x = h.a.x + h.a.y;"}, 12, 27,
                       "h.a.x + h.a.y: cannot operate on values with different types bit<8> and bit<16>"),
    "undefined_name": ({"ingress": "h.a.x = foo;"}, 12, 21, "foo: declaration not found"),
    "undefined_field": ({"ingress": "h.a.z = 1;"}, 12, 13, "h.a.z: a_t has no field z"),
    "non_bool_condition": ({"ingress": "if (h.a.x) { h.a.x = 1; }"}, 12, 17,
                           "Condition of an if statement must be of type bool, not bit<8>"),
    "too_many_arguments": ({"ingress": "mark_to_drop(sm, sm);"}, 12, 13,
                           "mark_to_drop: wrong number of arguments (2; expected 0 or 1)"),
    "assign_in_param": ({"ingress_locals": "action f(in bit<8> v) { v = 1; }", "ingress": "f(h.a.x);"}, 11, 29,
                        "v: cannot assign to an 'in' parameter"),
    "signed_unsigned_mix": ({"ingress": "h.a.s = h.a.s + h.a.x;"}, 12, 27,
                            "cannot operate on values with different types int<8> and bit<8>"),
    "unsized_shift": ({"ingress": "h.a.x = 1 << h.a.x;"}, 12, 23, "needs a width"),
    "default_action_not_listed": (
        {"ingress_locals": "action a1() {} action a2() {} table t { key = { h.a.x : exact; } actions = { a1; } "
                           "default_action = a2(); }", "ingress": "t.apply();"},
        11, 105, "t: default action a2 is not in the actions list"),
    "unknown_match_kind": ({"ingress_locals": "action a1() {} table t { key = { h.a.x : fuzzy; } actions = { a1; } }",
                            "ingress": "t.apply();"}, 11, 46, "fuzzy: match kind not found"),
    "unknown_state": ({"parser": "state start { transition nowhere; }"}, 7, 30, "nowhere: state not found"),
    "slice_out_of_range": ({"ingress": "h.a.x = h.a.x[8:1];"}, 12, 21, "bit slice [8:1] out of range of bit<8>"),
    "exit_in_parser": ({"parser": "state start { exit; }"}, 7, 19, "exit is not allowed in a parser"),
    "select_case_type": ({"parser": "state start { pkt.extract(h.a); transition select(h.a.x) { true: accept; "
                                    "default: accept; } }"}, 7, 64,
                         "keyset: cannot cast implicitly type 'bool' to type 'bit<8>'"),
    "apply_in_action": ({"ingress_locals": "action a1() {} table t { key = { h.a.x : exact; } actions = { a1; } } "
                                           "action a2() { t.apply(); }", "ingress": "a2();"}, 11, 89,
                        "t.apply: tables cannot be applied inside actions"),
    "duplicate_local": ({"ingress": "bit<8> v; bit<8> v;"}, 12, 23, "v: duplicate declaration"),
    "unknown_type": ({"ingress": "foo_t v;"}, 12, 13, "foo_t: declaration not found"),
    "extern_argument_width": ({"ingress_locals": "register<bit<32>>(4) r;", "ingress": "r.write(0, h.a.x);"},
                              12, 24, "r.write: argument value: cannot cast implicitly type 'bit<8>' to type "
                                      "'bit<32>'"),
    "next_in_control": ({"ingress": "h.st.next.x = 1;"}, 12, 13, "h.st.next: .next is only allowed in parsers"),
    "assign_constant": ({"ingress": "const bit<8> K = 1; K = 2;"}, 12, 33, "K: cannot be the target of an assignment"),
    "extract_non_header": ({"parser": "state start { pkt.extract(h.a.x); transition accept; }"}, 7, 31,
                           "h.a.x: argument must be a header"),  # p4c's wording (p4_16_bmv_errors/no-header1-bmv2)
    "action_data_missing": ({"ingress_locals": "action f(bit<8> v) { h.a.x = v; }", "ingress": "f();"}, 12, 13,
                            "f: action data parameters must be bound"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_negative_program(case: str) -> None:
    parts, line, column, message = CASES[case]
    src = program(decls=HEADERS, parser=parts.get("parser", PARSER), ingress=parts.get("ingress", ""),
                  ingress_locals=parts.get("ingress_locals", ""), deparser="pkt.emit(h.a);")
    with pytest.raises(CompileError) as info:
        compile_text(src, "neg")
    first = info.value.diagnostics[0]
    assert (first.location.file, first.location.line, first.location.column) == ("neg.p4", line, column)
    assert message in first.message
    rendered = first.render().splitlines()
    assert rendered[0].startswith(f"neg.p4:{line}:{column}: error: ")
    assert rendered[1] == src.splitlines()[line - 1].rstrip()
    assert rendered[2] == " " * (column - 1) + "^"


def test_all_errors_are_reported_together() -> None:
    src = program(decls=HEADERS, parser=PARSER, ingress="h.a.x = foo; h.a.y = bar;", deparser="pkt.emit(h.a);")
    with pytest.raises(CompileError) as info:
        compile_text(src, "neg")
    assert [d.message for d in info.value.diagnostics] == ["foo: declaration not found", "bar: declaration not found"]


def test_missing_main_is_an_error() -> None:
    with pytest.raises(CompileError, match="no `main` package instance"):
        compile_text("#include <core.p4>\n", "nomain")


def test_runtime_division_is_rejected() -> None:
    src = program(decls=HEADERS, parser=PARSER, ingress="h.a.x = h.a.x / h.a.x;", deparser="pkt.emit(h.a);")
    with pytest.raises(CompileError, match="division and modulo need compile-time constants"):
        compile_text(src, "neg")
