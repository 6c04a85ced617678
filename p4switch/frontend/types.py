"""Semantic P4_16 types, as the type checker computes them (the AST's `Type` nodes are only what was written).

Types are immutable values compared structurally, except named declared types (headers, structs, enums, externs)
which compare by name: P4 typing is nominal for those.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class P4Type:
    def __str__(self) -> str:  # pragma: no cover - every subclass overrides
        return type(self).__name__


@dataclass(frozen=True)
class BitsT(P4Type):
    """`bit<W>` (signed=False) or `int<W>` (signed=True)."""

    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True)
class VarbitT(P4Type):
    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class InfIntT(P4Type):
    """An integer literal or `int` constant without a width (arbitrary precision)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class BoolT(P4Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class StringT(P4Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class VoidT(P4Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class ErrorT(P4Type):
    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True)
class MatchKindT(P4Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class DontCareT(P4Type):
    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, eq=False)
class EnumT(P4Type):
    """An enum; serializable when `underlying` is set (then `values` maps member names to integers)."""

    name: str
    members: tuple[str, ...]
    underlying: BitsT | None = None
    values: dict[str, int] = field(default_factory=dict, hash=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EnumT) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("enum", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class StructLikeT(P4Type):
    """Base of struct, header and header union types: ordered named fields."""

    name: str
    fields: tuple[tuple[str, P4Type], ...]
    annotations: tuple[Any, ...] = field(default=(), hash=False)
    decl: Any = field(default=None, hash=False, compare=False)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    @functools.cached_property
    def field_index(self) -> dict[str, int]:
        """Field name -> position (the first, should a name repeat): a member lookup in a header of thousands of
        fields must not scan them all."""
        index: dict[str, int] = {}
        for i, (fname, _) in enumerate(self.fields):
            index.setdefault(fname, i)
        return index

    def field_type(self, name: str) -> P4Type | None:
        i = self.field_index.get(name)
        return None if i is None else self.fields[i][1]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class StructT(StructLikeT):
    pass


@dataclass(frozen=True, eq=False)
class HeaderT(StructLikeT):
    pass


@dataclass(frozen=True, eq=False)
class HeaderUnionT(StructLikeT):
    pass


@dataclass(frozen=True)
class StackT(P4Type):
    element: P4Type
    size: int

    def __str__(self) -> str:
        return f"{self.element}[{self.size}]"


@dataclass(frozen=True)
class TupleT(P4Type):
    elements: tuple[P4Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(str(e) for e in self.elements) + ">"


@dataclass(frozen=True)
class ListT(P4Type):
    """The type of a `{a, b}` list expression before it meets its context (a tuple, struct or header)."""

    elements: tuple[P4Type, ...]

    def __str__(self) -> str:
        return "list<" + ", ".join(str(e) for e in self.elements) + ">"


@dataclass(frozen=True)
class StructExprT(P4Type):
    """The type of `{a = 1, b = 2}` before it meets its context."""

    fields: tuple[tuple[str, P4Type], ...]

    def __str__(self) -> str:
        return "struct{" + ", ".join(f"{n}: {t}" for n, t in self.fields) + "}"


@dataclass(frozen=True, eq=False)
class NewTypeT(P4Type):
    """`type bit<9> PortId_t;`: a distinct type with the representation of `base`."""

    name: str
    base: P4Type
    annotations: tuple[Any, ...] = field(default=(), hash=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NewTypeT) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("newtype", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TypeVarT(P4Type):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class ExternT(P4Type):
    """An extern object type, specialized with `args` for its type parameters."""

    name: str
    args: tuple[P4Type, ...] = ()
    decl: Any = field(default=None, compare=False, hash=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExternT) and other.name == self.name and other.args == self.args

    def __hash__(self) -> int:
        return hash(("extern", self.name, self.args))

    def __str__(self) -> str:
        if self.args:
            return f"{self.name}<{', '.join(str(a) for a in self.args)}>"
        return self.name


@dataclass(frozen=True, eq=False)
class BlockT(P4Type):
    """A parser, control or package type (declared or an instance of one)."""

    kind: str  # "parser", "control", "package"
    name: str
    decl: Any = field(default=None, compare=False, hash=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlockT) and (other.kind, other.name) == (self.kind, self.name)

    def __hash__(self) -> int:
        return hash((self.kind, self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class TableT(P4Type):
    decl: Any = field(compare=False, hash=False)

    def __str__(self) -> str:
        return f"table {self.decl.name}"


@dataclass(frozen=True, eq=False)
class ApplyResultT(P4Type):
    """What `t.apply()` returns: `.hit`, `.miss`, `.action_run`."""

    decl: Any = field(compare=False, hash=False)

    def __str__(self) -> str:
        return f"apply_result({self.decl.name})"


@dataclass(frozen=True, eq=False)
class ActionEnumT(P4Type):
    """The type of `t.apply().action_run`: one of the table's actions."""

    decl: Any = field(compare=False, hash=False)

    def __str__(self) -> str:
        return f"action_list({self.decl.name})"


@dataclass(frozen=True, eq=False)
class CallableT(P4Type):
    """Something callable: an action, function, extern function or method (`decl` is its AST node)."""

    kind: str  # "action", "function", "extern_function", "method", "builtin"
    name: str
    decl: Any = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True, eq=False)
class TypeRefT(P4Type):
    """A type used in expression position (`Color` in `Color.RED`, `error` in `error.NoError`)."""

    target: P4Type

    def __str__(self) -> str:
        return f"type {self.target}"


def width_of(t: P4Type) -> int | None:
    """The width in bits of a fixed-size type, or None (P4's `sizeInBits` where defined)."""
    if isinstance(t, BitsT):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, NewTypeT):
        return width_of(t.base)
    if isinstance(t, VarbitT):
        return t.max_width
    if isinstance(t, (StructT, HeaderT)):
        total = 0
        for _, ftype in t.fields:
            w = width_of(ftype)
            if w is None:
                return None
            total += w
        return total
    if isinstance(t, StackT):
        w = width_of(t.element)
        return None if w is None else w * t.size
    if isinstance(t, (TupleT, ListT)):
        total = 0
        for e in t.elements:
            w = width_of(e)
            if w is None:
                return None
            total += w
        return total
    return None


def underlying(t: P4Type) -> P4Type:
    """Strip new types and serializable enums to the bit type that represents them."""
    while True:
        if isinstance(t, NewTypeT):
            t = t.base
        elif isinstance(t, EnumT) and t.underlying is not None:
            t = t.underlying
        else:
            return t


def is_header_like(t: P4Type) -> bool:
    return isinstance(t, (HeaderT, HeaderUnionT))
