"""Expressions BMv2 cannot evaluate (p4c's `backends/bmv2/common/lower.cpp`, `LowerExpressions::shift`): a shift
amount wider than 8 bits, or a constant one above 2^8. BMv2's shift primitive takes an 8-bit amount."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.typecheck.helpers import expr_text
from p4switch.frontend.types import BitsT, underlying

from .index import CodeIndex
from .report import Reporter, start_of

MAX_SHIFT_WIDTH = 8  # p4c's BMV2::LowerExpressions::maxShiftWidth


def check_expressions(index: CodeIndex, report: Reporter) -> None:
    for root in index.all_roots():
        for n in index.nodes(root):
            if isinstance(n, ast.BinaryOp) and n.op in ("<<", ">>"):
                _check_shift(index, n, report)


def _check_shift(index: CodeIndex, e: ast.BinaryOp, report: Reporter) -> None:
    """A compile-time amount is checked only when written as an unsized literal (p4c's InfInt case); a sized
    constant (`16w3`, a `const bit<16>`) is left alone, as this pass cannot tell how p4c types it by then."""
    amount = index.typed.consts.get(e.right)
    if amount is not None:
        if isinstance(e.right, ast.IntLiteral) and e.right.width is None and isinstance(amount, int) \
                and amount > 1 << MAX_SHIFT_WIDTH:
            report.error(start_of(e), f"{expr_text(e)}: shift amount limited to {1 << MAX_SHIFT_WIDTH} on this "
                                      f"target")
        return
    t = index.typed.types.get(e.right)
    u = underlying(t) if t is not None else None
    if isinstance(u, BitsT) and u.width > MAX_SHIFT_WIDTH:
        report.error(start_of(e), f"{expr_text(e)}: shift amount limited to {MAX_SHIFT_WIDTH} bits on this target")
