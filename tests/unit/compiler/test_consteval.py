"""Compile-time arithmetic (constant folding) follows the same P4_16 rules as the generated code."""

from __future__ import annotations

import pytest

from p4switch.codegen.module import hoist_chains
from p4switch.frontend import consteval as ce


@pytest.mark.parametrize(
    ("op", "a", "b", "width", "signed", "expected"),
    [
        ("+", 250, 10, 8, False, 4),
        ("-", 3, 5, 8, False, 254),
        ("-", 3, 5, 8, True, -2),
        ("*", 16, 16, 8, False, 0),
        ("|+|", 250, 10, 8, False, 255),
        ("|-|", 3, 5, 8, False, 0),
        ("|+|", 100, 100, 8, True, 127),
        ("|-|", -100, 100, 8, True, -128),
        ("<<", 1, 8, 8, False, 0),
        (">>", -128, 9, 8, True, -1),
        (">>", 0x80, 9, 8, False, 0),
        ("/", 7, 2, None, True, 3),
        ("/", -7, 2, None, True, -3),
        ("%", -7, 2, None, True, -1),
        ("<<", 1, 100, None, True, 1 << 100),
    ],
)
def test_binary(op: str, a: int, b: int, width: int | None, signed: bool, expected: int) -> None:
    assert ce.binary(op, a, b, width, signed) == expected


def test_wrap_reads_twos_complement() -> None:
    assert ce.wrap(0xFF, 8, True) == -1
    assert ce.wrap(-1, 8, False) == 0xFF
    assert ce.to_unsigned(-2, 16) == 0xFFFE


def test_hoisting_replaces_repeated_object_chains_only() -> None:
    lines = ["def f(ctx, p_h):", "    a = p_h.v.x", "    b = p_h.v.y", "    p_h.v.z = a + b", "    c = p_h.w.x"]
    out = hoist_chains(lines)
    assert out[:2] == ["def f(ctx, p_h):", "    _p_h_v = p_h.v"]
    assert out[2:] == ["    a = _p_h_v.x", "    b = _p_h_v.y", "    _p_h_v.z = a + b", "    c = p_h.w.x"]
