"""Name resolution and type checking of a parsed P4_16 program.

`check_program` walks the AST once, in declaration order, resolving every name against lexical scopes and giving
every expression its P4_16 type, with implicit casts of unsized integer literals, constant folding and the checks
p4c makes (widths, l-values, directions, argument counts, boolean conditions, table properties). Results are side
tables keyed by AST node (`TypedProgram`), which the elaborator and the code generator read; errors are collected
as compiler diagnostics and raised together as one `CompileError`.

One concern per module, each a layer of the `TypeChecker` class built on the one before: `base` (state,
diagnostics) < `typedecls` < `conversion` (implicit casts) < `expressions` < `calls` (resolution, argument
matching) < `statements` < `declarations` < `parsers` < `controls` (and tables) < `program` (top level, entry
point); `results` holds `TypedProgram` and `CallInfo`, `helpers` the pure functions.
"""

from __future__ import annotations

from p4switch.frontend.typecheck.base import ARITH_OPS, COMPARE_OPS
from p4switch.frontend.typecheck.helpers import expr_text, substitute
from p4switch.frontend.typecheck.program import TypeChecker, check_program
from p4switch.frontend.typecheck.results import CallInfo, TypedProgram

__all__ = [
    "ARITH_OPS",
    "COMPARE_OPS",
    "CallInfo",
    "TypeChecker",
    "TypedProgram",
    "check_program",
    "expr_text",
    "substitute",
]
