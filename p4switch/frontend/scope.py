"""Lexical scopes for name resolution: values (variables, constants, instances, actions, tables...) and types live
in separate namespaces, as in P4_16, and inner scopes shadow outer ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend.types import P4Type


@dataclass(eq=False)
class Var:
    """A value-level name: a parameter, local variable, constant or instance. `value` holds a constant's value."""

    name: str
    type: P4Type
    kind: str  # "param", "local", "const", "instance", "ctor_param"
    direction: str | None = None
    node: ast.Node | None = None
    value: Any = None
    owner: Any = None  # the enclosing parser/control/action/function declaration, None at top level


@dataclass(eq=False)
class Scope:
    parent: Scope | None = None
    values: dict[str, Any] = field(default_factory=dict)
    types: dict[str, P4Type] = field(default_factory=dict)
    owner: Any = None

    def child(self, owner: Any = None) -> Scope:
        return Scope(self, owner=owner if owner is not None else self.owner)

    def lookup_value(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None

    def lookup_type(self, name: str) -> P4Type | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.types:
                return scope.types[name]
            scope = scope.parent
        return None

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope
