"""The P4_16 abstract syntax tree produced by the parser and consumed by name resolution, type checking and codegen.

Every node is an immutable, slotted dataclass with keyword-only fields and a `loc` (where it starts in the original
source, after preprocessing is undone). Nodes compare and hash by identity (`eq=False`), so later passes can key side
tables (types, resolved declarations) by node; `dump()` gives a structural view for tests. Sequences are tuples.

Compatibility contract: fields and classes are only ever added (with defaults), never renamed or removed.

Node families
- Annotations: `Annotation` (unstructured token body kept as text, plus parsed `args`/`kvs` when it parses).
- Types: `BitType`, `IntType`, `VarbitType` (width is an `Expression`), `BoolType`, `ErrorType`, `StringType`,
  `InfIntType` (`int`), `VoidType`, `MatchKindType`, `NamedType` (with type arguments, e.g. `register<bit<32>>`),
  `TupleType`, `StackType` (`h_t[4]`), `DontCareType` (`_`).
- Expressions: literals (`IntLiteral`, `BoolLiteral`, `StringLiteral`), `Name` (incl. top-level `.x`), `Member`,
  `Index`, `Slice`, `Call` (with type arguments and possibly named `Argument`s), `ListExpression` (`{a, b}`),
  `StructExpression` (`{a = 1}`), `UnaryOp`, `BinaryOp` (also `&&&` masks and `..` ranges), `Ternary`, `Cast`,
  `DontCare` (`_`), `DefaultExpression` (`default`), `TupleKeyset` (`(a, _)` in select/entries), `SelectExpression`,
  `InvalidHeader` (`{#}`).
- Statements: `AssignmentStatement`, `MethodCallStatement`, `IfStatement`, `SwitchStatement`/`SwitchCase`,
  `BlockStatement`, `ReturnStatement`, `ExitStatement`, `EmptyStatement`, `ForStatement`/`ForInStatement` with
  `BreakStatement`/`ContinueStatement` (P4_16 1.2.5 loops), plus the local declarations
  `VariableDeclaration`, `ConstantDeclaration` and `Instantiation`, which are also statements.
- Parsers: `ParserState`, `TransitionStatement`, `SelectExpression`, `SelectCase`, `ValueSetDeclaration`.
- Tables: `TableDeclaration` with properties `KeyProperty`/`KeyElement`, `ActionsProperty`/`ActionRef`,
  `DefaultActionProperty`, `EntriesProperty`/`TableEntry`, and `TableProperty` for everything else (`size`,
  `implementation`, `counters`, `meters`, `support_timeout`, custom ones).
- Declarations: `HeaderType`, `HeaderUnionType`, `StructType` (`StructField`), `EnumType` (`EnumMember`; serializable
  when `underlying` is set), `TypedefDeclaration`, `NewTypeDeclaration` (`type`), `ErrorDeclaration`,
  `MatchKindDeclaration`, `ConstantDeclaration`, `ExternDeclaration` (`MethodPrototype`, `ConstructorPrototype`),
  `FunctionPrototype` (extern functions), `FunctionDeclaration`, `ActionDeclaration`, `Parameter`, `ParserType`,
  `ParserDeclaration`, `ControlType`, `ControlDeclaration`, `PackageType`, `Instantiation`, `ValueSetDeclaration`,
  `TableDeclaration`, and the root `Program`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from p4switch.exceptions import SourceLocation


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Node:
    """Base of every AST node: it knows where it came from."""

    loc: SourceLocation


# --------------------------------------------------------------------------------------------------- annotations


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Annotation(Node):
    """`@name`, `@name(unstructured tokens)`, `@name[expr, ...]` or `@name[k = v, ...]`.

    `body` is the annotation's token text joined by single spaces (string literals keep their quotes), `tokens` the
    individual token texts. `args` is the body parsed as an expression list when that succeeds (so `@name("x")` has
    `args == (StringLiteral("x"),)`, `@id(5)` has an `IntLiteral`), else None. `kvs` holds `k = v` pairs when the
    structured `[...]` form uses them. `@pragma` keeps its words in `tokens`.
    """

    name: str
    body: str = ""
    tokens: tuple[str, ...] = ()
    args: tuple[Expression, ...] | None = None
    kvs: tuple[NamedExpression, ...] | None = None
    structured: bool = False


# --------------------------------------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Type(Node):
    """Base of type references written in source."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class BitType(Type):
    """`bit<W>` (or the bare `bit`, which is `bit<1>`); `width` is any compile-time expression."""

    width: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class IntType(Type):
    """`int<W>`: signed two's complement of width W."""

    width: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class VarbitType(Type):
    """`varbit<W>`: up to W bits."""

    width: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class BoolType(Type):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ErrorType(Type):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class StringType(Type):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class InfIntType(Type):
    """`int` without width: arbitrary precision compile-time integer."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class VoidType(Type):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class MatchKindType(Type):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class NamedType(Type):
    """A reference to a declared type, optionally specialized: `headers_t`, `.T`, `register<bit<32>>`."""

    name: str
    type_args: tuple[Type, ...] = ()
    is_global: bool = False


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class TupleType(Type):
    """`tuple<T1, T2>`."""

    elements: tuple[Type, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class StackType(Type):
    """A header stack `h_t[N]`."""

    element: Type
    size: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class DontCareType(Type):
    """`_` as a type argument (inferred)."""


# --------------------------------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Expression(Node):
    """Base of expressions."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class IntLiteral(Expression):
    """An integer literal. `width`/`signed` come from a `8w`/`8s` prefix (None/False for an unsized literal).

    `value` is the literal's mathematical value as written (no truncation applied: `8w256` keeps 256 so that the
    type checker can warn; `-` is a separate `UnaryOp`). `base` is 2, 8, 10 or 16; `text` the original spelling.
    """

    value: int
    width: int | None = None
    signed: bool = False
    base: int = 10
    text: str = ""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class BoolLiteral(Expression):
    value: bool


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class StringLiteral(Expression):
    """A string literal, with escapes decoded in `value`."""

    value: str


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Name(Expression):
    """A name reference; `is_global` for the top-level-scope form `.name`. Keywords used as values (`error`,
    `this`) are also `Name`s."""

    name: str
    is_global: bool = False


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Member(Expression):
    """`expr.member`: field access, method reference, `error.X`, enum member, `.next`/`.last`, `.hit`..."""

    expr: Expression
    member: str


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Index(Expression):
    """`expr[index]`: header stack element (or tuple element)."""

    expr: Expression
    index: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Slice(Expression):
    """`expr[hi:lo]`: bits hi down to lo inclusive."""

    expr: Expression
    hi: Expression
    lo: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Argument(Node):
    """One call argument; `name` is set for named arguments (`f(x = 1)`). `value` may be `DontCare`."""

    value: Expression
    name: str | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Call(Expression):
    """`target<type_args>(args)`: method, function, action call or constructor call (`P()` in package args)."""

    target: Expression
    type_args: tuple[Type, ...] = ()
    args: tuple[Argument, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ListExpression(Expression):
    """`{a, b, c}`: a list/tuple expression (also `{}`)."""

    items: tuple[Expression, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class NamedExpression(Node):
    """`name = value` inside a struct initializer or a structured annotation."""

    name: str
    value: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class StructExpression(Expression):
    """`{a = 1, b = 2}`: a structure-valued expression; `type` is set for the typed form `T {a = 1}`."""

    fields: tuple[NamedExpression, ...] = ()
    type: Type | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class UnaryOp(Expression):
    """`op operand` with op in `!`, `~`, `-`, `+`."""

    op: str
    operand: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class BinaryOp(Expression):
    """`left op right`. Ops: `* / % + - |+| |-| << >> <= >= < > == != & ^ | && || ++` and, in keysets/entries,
    `&&&` (value and mask) and `..` (inclusive range)."""

    op: str
    left: Expression
    right: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Ternary(Expression):
    """`cond ? then : else_`."""

    cond: Expression
    then: Expression
    else_: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Cast(Expression):
    """`(type) expr`."""

    type: Type
    expr: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class DontCare(Expression):
    """`_`: matches anything in keysets; an ignored `out` argument in calls."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class DefaultExpression(Expression):
    """`default`: the catch-all keyset in `select` and table entries."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class TupleKeyset(Expression):
    """`(k1, k2)`: a keyset for a multi-key `select` case or table entry."""

    elements: tuple[Expression, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class InvalidHeader(Expression):
    """`{#}`: an invalid header or header union value."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class SelectCase(Node):
    """`keyset : state;` inside `select`. `keyset` is a single expression, `TupleKeyset`, `DontCare` or
    `DefaultExpression`; a value set is referenced by `Name`."""

    keyset: Expression
    state: Name
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class SelectExpression(Expression):
    """`select(keys) { cases }`."""

    keys: tuple[Expression, ...]
    cases: tuple[SelectCase, ...] = ()


# ---------------------------------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Statement(Node):
    """Base of statements (parser and control bodies)."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class AssignmentStatement(Statement):
    left: Expression
    right: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class MethodCallStatement(Statement):
    """A call used as a statement: `t.apply();`, `f(x);`, `h.setValid();`, `pkt.extract<T>(h);`."""

    call: Call


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class BlockStatement(Statement):
    statements: tuple[Statement, ...] = ()
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class IfStatement(Statement):
    cond: Expression
    then: Statement
    else_: Statement | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class SwitchCase(Node):
    """One `label: { ... }` of a switch. `body` is None for a fall-through label (`a: b: { ... }` groups `a` with
    `b`). `label` is a `Name`/expression or `DefaultExpression`."""

    label: Expression
    body: BlockStatement | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class SwitchStatement(Statement):
    """`switch (expr) { cases }` on `t.apply().action_run` or on an enum/integer expression."""

    expr: Expression
    cases: tuple[SwitchCase, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ReturnStatement(Statement):
    value: Expression | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ExitStatement(Statement):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class EmptyStatement(Statement):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ForStatement(Statement):
    """`for (init; cond; updates) body` (P4_16 1.2.5). `init` holds declarations or assignments."""

    body: Statement
    init: tuple[Statement, ...] = ()
    cond: Expression | None = None
    updates: tuple[Statement, ...] = ()
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ForInStatement(Statement):
    """`for ([T] name in collection) body` (P4_16 1.2.5); `collection` is e.g. a range `lo .. hi` or a list."""

    name: str
    collection: Expression
    body: Statement
    var_type: Type | None = None
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class BreakStatement(Statement):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ContinueStatement(Statement):
    pass


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class TransitionStatement(Statement):
    """`transition name;` (target is a `Name`) or `transition select(...) {...}` (a `SelectExpression`)."""

    target: Expression


# -------------------------------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Declaration(Statement):
    """Base of named declarations. Declarations that may appear inside bodies are also statements."""

    name: str
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class StructField(Node):
    name: str
    type: Type
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class HeaderType(Declaration):
    fields: tuple[StructField, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class HeaderUnionType(Declaration):
    fields: tuple[StructField, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class StructType(Declaration):
    fields: tuple[StructField, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class EnumMember(Node):
    """An enum member; `value` is set (and required) for serializable enums."""

    name: str
    value: Expression | None = None
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class EnumType(Declaration):
    """`enum E {A, B}` or the serializable `enum bit<8> E {A = 1}` (then `underlying` is set)."""

    members: tuple[EnumMember, ...] = ()
    underlying: Type | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class TypedefDeclaration(Declaration):
    """`typedef T name;` (an alias). The aliased type may also be an inline derived type declaration."""

    type: Type | Declaration


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class NewTypeDeclaration(Declaration):
    """`type T name;`: a new, distinct type with T's representation."""

    type: Type | Declaration


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ErrorDeclaration(Node):
    """`error { A, B }`: adds members to the single `error` type (declarations accumulate)."""

    members: tuple[str, ...] = ()
    member_locs: tuple[SourceLocation, ...] = ()
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class MatchKindDeclaration(Node):
    """`match_kind { exact, ternary }`: adds members to the `match_kind` type."""

    members: tuple[str, ...] = ()
    member_locs: tuple[SourceLocation, ...] = ()
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ConstantDeclaration(Declaration):
    """`const T name = value;` at top level or inside a body."""

    type: Type
    value: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class VariableDeclaration(Declaration):
    """`T name [= init];` inside a body."""

    type: Type
    init: Expression | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Parameter(Node):
    """`[direction] T name [= default]`; direction is 'in', 'out', 'inout' or None (directionless)."""

    name: str
    type: Type
    direction: str | None = None
    default: Expression | None = None
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class MethodPrototype(Node):
    """A method of an extern: `[abstract] R name<T>(params);`. Overloads are separate prototypes."""

    name: str
    return_type: Type
    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()
    abstract: bool = False
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ConstructorPrototype(Node):
    """An extern constructor `Name(params);`."""

    name: str
    params: tuple[Parameter, ...] = ()
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ExternDeclaration(Declaration):
    """`extern Name<T> { constructors; methods; }` (an extern object type)."""

    type_params: tuple[str, ...] = ()
    constructors: tuple[ConstructorPrototype, ...] = ()
    methods: tuple[MethodPrototype, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class FunctionPrototype(Declaration):
    """`extern R name<T>(params);`: an extern function (e.g. `mark_to_drop`, `hash`, `verify`)."""

    return_type: Type
    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class FunctionDeclaration(Declaration):
    """`R name<T>(params) { body }`: a P4 function."""

    return_type: Type
    body: BlockStatement
    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ActionDeclaration(Declaration):
    """`action name(params) { body }`: directional params are bound by the caller, directionless ones by the
    control plane (or by `default_action`/entries)."""

    body: BlockStatement
    params: tuple[Parameter, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ParserType(Declaration):
    """`parser Name<T>(params);`: a parser type (as in architecture files)."""

    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ControlType(Declaration):
    """`control Name<T>(params);`: a control type."""

    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class PackageType(Declaration):
    """`package Name<T>(params);`: e.g. `V1Switch`."""

    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ParserState(Declaration):
    """`state name { statements; transition ...; }`. `transition` is None when the state has none (an error for
    user states; `accept`/`reject` are implicit and never declared)."""

    statements: tuple[Statement, ...] = ()
    transition: TransitionStatement | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ValueSetDeclaration(Declaration):
    """`value_set<T>(size) name;` inside a parser."""

    element_type: Type
    size: Expression


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ParserDeclaration(Declaration):
    """`parser Name<T>(params)(ctor_params) { locals; states }`."""

    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()
    constructor_params: tuple[Parameter, ...] = ()
    locals: tuple[Declaration, ...] = ()
    states: tuple[ParserState, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ControlDeclaration(Declaration):
    """`control Name<T>(params)(ctor_params) { locals; apply { body } }`."""

    body: BlockStatement
    params: tuple[Parameter, ...] = ()
    type_params: tuple[str, ...] = ()
    constructor_params: tuple[Parameter, ...] = ()
    locals: tuple[Declaration, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Instantiation(Declaration):
    """`T(args) name;` or `T<A>(args) name [= { abstract method implementations }];`, e.g. `register<bit<32>>(64) r;`
    and `V1Switch(P(), ...) main;`. `initializer` holds the declarations inside `= { ... }`."""

    type: Type
    args: tuple[Argument, ...] = ()
    initializer: tuple[Declaration, ...] | None = None


# -------------------------------------------------------------------------------------------------------- tables


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class TableProperty(Node):
    """A table property without dedicated syntax: `size = 1024;`, `implementation = ap;`, `counters = c;`,
    `support_timeout = true;` or a custom one. `const` for `const name = value;`."""

    name: str
    value: Expression | None = None
    const: bool = False
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class KeyElement(Node):
    """`expr : match_kind;` with its annotations (e.g. `@name("ipv4.dst")`)."""

    expr: Expression
    match_kind: str
    match_kind_loc: SourceLocation | None = None
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class KeyProperty(TableProperty):
    """`key = { elements }` (`name == "key"`, `value` None)."""

    elements: tuple[KeyElement, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ActionRef(Node):
    """A reference to an action in `actions = {...}`, `default_action` or an entry: `a`, `a(1, x)`, `.a`.
    `args` is None when written without parentheses."""

    name: Name
    args: tuple[Argument, ...] | None = None
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ActionsProperty(TableProperty):
    """`actions = { a; @defaultonly b; c; }` (`name == "actions"`, `value` None)."""

    actions: tuple[ActionRef, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class DefaultActionProperty(TableProperty):
    """`[const] default_action = a(args);` (`name == "default_action"`, `value` None)."""

    action: ActionRef | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class TableEntry(Node):
    """`[const] [priority = p :] keyset : action(args);` in `entries`."""

    keyset: Expression
    action: ActionRef
    priority: Expression | None = None
    const: bool = False
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class EntriesProperty(TableProperty):
    """`[const] entries = { ... }` (`name == "entries"`, `value` None)."""

    entries: tuple[TableEntry, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class TableDeclaration(Declaration):
    """`table name { properties }` (in source order)."""

    properties: tuple[TableProperty, ...] = ()


# -------------------------------------------------------------------------------------------------------- program


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Program(Node):
    """A whole preprocessed P4 program: top-level declarations in source order (includes already expanded).

    Top-level items are `Declaration`s plus `ErrorDeclaration` and `MatchKindDeclaration`."""

    declarations: tuple[Node, ...] = ()


# -------------------------------------------------------------------------------------------------------- helpers


def children(node: Node) -> Iterator[Node]:
    """Yield the direct child nodes of `node` in field order (for generic walks)."""
    return iter(_child_nodes(node))


def walk(node: Node) -> Iterator[Node]:
    """Yield `node` and all its descendants, depth first, in source order."""
    stack = [node]
    pop = stack.pop
    extend = stack.extend
    while stack:
        current = pop()
        yield current
        kids = _child_nodes(current)
        if kids:
            kids.reverse()
            extend(kids)


def _child_nodes(node: Node) -> list[Node]:
    out: list[Node] = []
    for name in node_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            out.append(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Node):
                    out.append(item)
    return out


def node_fields(cls: type[Node]) -> tuple[str, ...]:
    """The field names of a node class but `loc`, in order: what generic walks and structural comparisons visit
    (computed once per class: the walks of a wide program visit a million nodes, and `dataclasses.fields` per node
    was most of their cost)."""
    names = _NODE_FIELDS.get(cls)
    if names is None:
        names = _NODE_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name != "loc")
    return names


_NODE_FIELDS: dict[type[Node], tuple[str, ...]] = {}


def dump(node: Any, *, with_loc: bool = False) -> Any:
    """A structural, comparable rendering of a node (nested tuples), for tests and debugging."""
    if isinstance(node, Node):
        items: list[Any] = [type(node).__name__]
        for f in dataclasses.fields(node):
            if f.name == "loc" and not with_loc:
                continue
            value = getattr(node, f.name)
            if f.name == "loc":
                items.append(("loc", str(value)))
                continue
            if value is None or value == () or value is False or (f.name == "text" and value == ""):
                continue
            items.append((f.name, dump(value, with_loc=with_loc)))
        return tuple(items)
    if isinstance(node, tuple):
        return tuple(dump(item, with_loc=with_loc) for item in node)
    return node
