"""Compile-time integer arithmetic with P4_16 semantics: the same rules the generated code applies at run time.

Used for constant folding (`const` declarations, type widths, table entries, select keysets) and by the code
generator for its own constant expressions, so both agree bit for bit.
"""

from __future__ import annotations


def mask(width: int) -> int:
    return (1 << width) - 1


def wrap(value: int, width: int, signed: bool) -> int:
    """`value` reduced to `width` bits, then read as two's complement when `signed`."""
    value &= (1 << width) - 1
    if signed and width and value >> (width - 1):
        value -= 1 << width
    return value


def to_unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


def sat_add(a: int, b: int, width: int, signed: bool) -> int:
    """`|+|`: saturating addition."""
    total = a + b
    if signed:
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    else:
        lo, hi = 0, (1 << width) - 1
    return max(lo, min(hi, total))


def sat_sub(a: int, b: int, width: int, signed: bool) -> int:
    """`|-|`: saturating subtraction."""
    return sat_add(a, -b, width, signed)


def shift_left(a: int, n: int, width: int | None, signed: bool) -> int:
    if width is None:
        return a << n
    if n >= width:
        return 0
    return wrap(a << n, width, signed)


def shift_right(a: int, n: int, width: int | None, signed: bool) -> int:
    """`>>`: logical for bit<W>, arithmetic for int<W>; shifting by >= W gives 0 (or -1 for negative int)."""
    if width is None:
        return a >> n
    if n >= width:
        return -1 if (signed and a < 0) else 0
    return a >> n


def binary(op: str, a: int, b: int, width: int | None, signed: bool) -> int:
    """Apply `op` to two integers of a type (`width` None for arbitrary precision)."""
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op == "/":
        r = a // b if (a >= 0) == (b >= 0) or a % b == 0 else -(abs(a) // abs(b))
    elif op == "%":
        r = a - b * binary("/", a, b, None, True)
    elif op == "&":
        r = a & b
    elif op == "|":
        r = a | b
    elif op == "^":
        r = a ^ b
    elif op == "<<":
        return shift_left(a, b, width, signed)
    elif op == ">>":
        return shift_right(a, b, width, signed)
    elif op == "|+|":
        assert width is not None
        return sat_add(a, b, width, signed)
    elif op == "|-|":
        assert width is not None
        return sat_sub(a, b, width, signed)
    else:
        raise ValueError(op)
    return r if width is None else wrap(r, width, signed)
