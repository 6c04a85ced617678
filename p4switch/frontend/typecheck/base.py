"""The checker's shared state and diagnostics: every checking layer (`typedecls`, `conversion`, `expressions`,
`calls`, `statements`, `declarations`, `parsers`, `controls`) builds on `CheckerBase`."""

from __future__ import annotations

from typing import Any

from p4switch.exceptions import Diagnostic, SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.scope import Scope
from p4switch.frontend.typecheck.results import Abort, TypedProgram
from p4switch.frontend.types import P4Type

ARITH_OPS = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}
COMPARE_OPS = {"==", "!=", "<", ">", "<=", ">="}


class CheckerBase:
    """The program, its global scope, the result tables being filled and the diagnostics found so far."""

    def __init__(self, program: ast.Program, *, line_of: Any = None) -> None:
        self.program = program
        self.line_of = line_of
        self.globals = Scope()
        self.out = TypedProgram(program, self.globals)
        self.diagnostics: list[Diagnostic] = []
        self._return_type: list[P4Type | None] = []
        self._in_action = 0
        self._in_parser = 0
        self._loops = 0  # loops around the statement being checked (`break`/`continue` need one)

    def error(self, loc: SourceLocation, message: str) -> None:
        line = self.line_of(loc) if self.line_of is not None else None
        self.diagnostics.append(Diagnostic(loc, message, source_line=line))

    def fail(self, loc: SourceLocation, message: str) -> Abort:
        self.error(loc, message)
        return Abort()

    def declare_value(self, scope: Scope, name: str, value: Any, loc: SourceLocation) -> None:
        if name in scope.values and not isinstance(scope.values[name], list):
            self.error(loc, f"{name}: duplicate declaration")
        scope.values[name] = value
