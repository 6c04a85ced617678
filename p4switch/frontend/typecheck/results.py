"""What the type checker hands to later passes: `TypedProgram` (side tables keyed by AST node) and `CallInfo` (what
one call resolved to), plus `Abort`, which stops checking one construct after its diagnostic was recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend.scope import Scope, Var
from p4switch.frontend.types import P4Type


class Abort(Exception):
    """Stops checking one expression after its diagnostic was recorded."""


@dataclass(eq=False)
class CallInfo:
    """What a call resolved to. `kind`: action, function, extern_function, extern_method, header_method,
    stack_method, table_apply, block_apply, constructor. `params` are the callee's parameters with their types after
    type-argument substitution; `receiver` is the object expression for methods."""

    kind: str
    name: str
    decl: Any
    params: list[tuple[ast.Parameter, P4Type]] = field(default_factory=list)
    receiver: ast.Expression | None = None
    type_args: dict[str, P4Type] = field(default_factory=dict)
    args: list[ast.Argument | None] = field(default_factory=list)  # one per param, in parameter order


@dataclass
class TypedProgram:
    """The type checker's results, keyed by AST node."""

    program: ast.Program
    globals: Scope
    types: dict[ast.Node, P4Type] = field(default_factory=dict)
    refs: dict[ast.Node, Any] = field(default_factory=dict)
    consts: dict[ast.Node, Any] = field(default_factory=dict)
    calls: dict[ast.Call, CallInfo] = field(default_factory=dict)
    decl_vars: dict[ast.Node, Var] = field(default_factory=dict)
    error_codes: list[str] = field(default_factory=list)
    match_kinds: list[str] = field(default_factory=list)
    named_types: dict[str, P4Type] = field(default_factory=dict)
    scopes: dict[ast.Node, Scope] = field(default_factory=dict)
