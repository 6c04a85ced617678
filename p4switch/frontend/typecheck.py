"""Name resolution and type checking of a parsed P4_16 program.

`check_program` walks the AST once, in declaration order, resolving every name against lexical scopes and giving
every expression its P4_16 type, with implicit casts of unsized integer literals, constant folding and the checks
p4c makes (widths, l-values, directions, argument counts, boolean conditions, table properties). Results are side
tables keyed by AST node (`TypedProgram`), which the elaborator and the code generator read; errors are collected
as compiler diagnostics and raised together as one `CompileError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.exceptions import CompileError, Diagnostic, SourceLocation
from p4switch.frontend import ast
from p4switch.frontend import consteval as ce
from p4switch.frontend.scope import Scope, Var
from p4switch.frontend.types import (
    ActionEnumT,
    ApplyResultT,
    BitsT,
    BlockT,
    BoolT,
    CallableT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    HeaderUnionT,
    InfIntT,
    ListT,
    MatchKindT,
    NewTypeT,
    P4Type,
    StackT,
    StringT,
    StructExprT,
    StructLikeT,
    StructT,
    TableT,
    TupleT,
    TypeRefT,
    TypeVarT,
    VarbitT,
    VoidT,
    underlying,
)

ARITH_OPS = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}
COMPARE_OPS = {"==", "!=", "<", ">", "<=", ">="}
BUILTIN_STACK_MEMBERS = {"next", "last", "lastIndex", "size"}


class _Abort(Exception):
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


class TypeChecker:
    def __init__(self, program: ast.Program, *, line_of: Any = None) -> None:
        self.program = program
        self.line_of = line_of
        self.globals = Scope()
        self.out = TypedProgram(program, self.globals)
        self.diagnostics: list[Diagnostic] = []
        self._return_type: list[P4Type | None] = []
        self._in_action = 0
        self._in_parser = 0

    # ------------------------------------------------------------------------------------------------ diagnostics
    def error(self, loc: SourceLocation, message: str) -> None:
        line = self.line_of(loc) if self.line_of is not None else None
        self.diagnostics.append(Diagnostic(loc, message, source_line=line))

    def fail(self, loc: SourceLocation, message: str) -> _Abort:
        self.error(loc, message)
        return _Abort()

    # ------------------------------------------------------------------------------------------------- top level
    def run(self) -> TypedProgram:
        g = self.globals
        g.types["error"] = ErrorT()
        g.types["match_kind"] = MatchKindT()
        for decl in self.program.declarations:
            try:
                self.top_decl(decl)
            except _Abort:
                pass
        if self.diagnostics:
            raise CompileError(self.diagnostics)
        self.out.named_types = dict(g.types)
        return self.out

    def declare_value(self, scope: Scope, name: str, value: Any, loc: SourceLocation) -> None:
        if name in scope.values and not isinstance(scope.values[name], list):
            self.error(loc, f"{name}: duplicate declaration")
        scope.values[name] = value

    def top_decl(self, decl: ast.Node) -> None:
        g = self.globals
        if isinstance(decl, ast.ErrorDeclaration):
            for name, loc in zip(decl.members, decl.member_locs or [decl.loc] * len(decl.members), strict=False):
                if name in self.out.error_codes:
                    self.error(loc, f"error.{name}: duplicate declaration")
                else:
                    self.out.error_codes.append(name)
            return
        if isinstance(decl, ast.MatchKindDeclaration):
            for name in decl.members:
                if name not in self.out.match_kinds:
                    self.out.match_kinds.append(name)
                g.values[name] = Var(name, MatchKindT(), "const", node=decl, value=name)
            return
        if isinstance(decl, (ast.HeaderType, ast.HeaderUnionType, ast.StructType, ast.EnumType,
                             ast.TypedefDeclaration, ast.NewTypeDeclaration)):
            self.type_decl(g, decl)
            return
        if isinstance(decl, ast.ExternDeclaration):
            g.types[decl.name] = ExternT(decl.name, (), decl)
            # an extern's constructors are found through its type name
            return
        if isinstance(decl, ast.FunctionPrototype):
            existing = g.values.get(decl.name)
            if isinstance(existing, list):
                existing.append(decl)
            else:
                g.values[decl.name] = [decl]
            return
        if isinstance(decl, (ast.ParserType, ast.ControlType, ast.PackageType)):
            kind = {ast.ParserType: "parser", ast.ControlType: "control", ast.PackageType: "package"}[type(decl)]
            g.types[decl.name] = BlockT(kind, decl.name, decl)
            return
        if isinstance(decl, ast.ConstantDeclaration):
            self.const_decl(g, decl)
            return
        if isinstance(decl, ast.ActionDeclaration):
            self.declare_value(g, decl.name, decl, decl.loc)
            self.action_decl(g, decl)
            return
        if isinstance(decl, ast.FunctionDeclaration):
            self.declare_value(g, decl.name, decl, decl.loc)
            self.function_decl(g, decl)
            return
        if isinstance(decl, ast.ParserDeclaration):
            g.types[decl.name] = BlockT("parser", decl.name, decl)
            self.parser_decl(g, decl)
            return
        if isinstance(decl, ast.ControlDeclaration):
            g.types[decl.name] = BlockT("control", decl.name, decl)
            self.control_decl(g, decl)
            return
        if isinstance(decl, ast.Instantiation):
            self.instantiation(g, decl)
            return
        self.error(decl.loc, f"unsupported top-level declaration {type(decl).__name__}")

    # ------------------------------------------------------------------------------------------------------ types
    def type_decl(self, scope: Scope, decl: ast.Node) -> P4Type:
        if isinstance(decl, (ast.HeaderType, ast.HeaderUnionType, ast.StructType)):
            cls = {ast.HeaderType: HeaderT, ast.HeaderUnionType: HeaderUnionT, ast.StructType: StructT}[type(decl)]
            inner = scope.child()
            for tp in decl.type_params:
                inner.types[tp] = TypeVarT(tp)
            fields: list[tuple[str, P4Type]] = []
            seen: set[str] = set()
            for f in decl.fields:
                if f.name in seen:
                    self.error(f.loc, f"{f.name}: duplicate field in {decl.name}")
                seen.add(f.name)
                ftype = self.resolve_type(inner, f.type)
                if cls is HeaderT and not isinstance(underlying(ftype), (BitsT, VarbitT, BoolT)):
                    if not isinstance(ftype, (StructT, TypeVarT)):
                        self.error(f.loc, f"{f.name}: header fields must be bit<>, int<>, varbit<>, bool, "
                                          f"serializable enums or structs of those, not {ftype}")
                if cls is HeaderUnionT and not isinstance(ftype, HeaderT):
                    self.error(f.loc, f"{f.name}: header union fields must be headers, not {ftype}")
                fields.append((f.name, ftype))
            t: P4Type = cls(decl.name, tuple(fields), decl.annotations, decl)
            scope.types[decl.name] = t
            return t
        if isinstance(decl, ast.EnumType):
            if decl.underlying is not None:
                base = self.resolve_type(scope, decl.underlying)
                if not isinstance(base, BitsT):
                    self.error(decl.loc, f"{decl.name}: the underlying type of an enum must be bit<> or int<>")
                    base = BitsT(32)
                values: dict[str, int] = {}
                for m in decl.members:
                    if m.value is None:
                        self.error(m.loc, f"{m.name}: a serializable enum member needs a value")
                        continue
                    try:
                        values[m.name] = ce.wrap(self.const_int(scope, m.value, base), base.width, base.signed)
                    except _Abort:
                        pass
                t = EnumT(decl.name, tuple(m.name for m in decl.members), base, values)
            else:
                t = EnumT(decl.name, tuple(m.name for m in decl.members))
            scope.types[decl.name] = t
            return t
        if isinstance(decl, ast.TypedefDeclaration):
            target = decl.type
            t = self.type_decl(scope, target) if isinstance(target, ast.Declaration) else self.resolve_type(scope, target)
            scope.types[decl.name] = t
            return t
        if isinstance(decl, ast.NewTypeDeclaration):
            target = decl.type
            base = self.type_decl(scope, target) if isinstance(target, ast.Declaration) else self.resolve_type(scope, target)
            t = NewTypeT(decl.name, base, decl.annotations)
            scope.types[decl.name] = t
            return t
        raise self.fail(decl.loc, "not a type declaration")

    def resolve_type(self, scope: Scope, t: ast.Type | None) -> P4Type:
        if t is None:
            return VoidT()
        if isinstance(t, ast.BitType):
            return BitsT(self.width(scope, t.width), False)
        if isinstance(t, ast.IntType):
            return BitsT(self.width(scope, t.width), True)
        if isinstance(t, ast.VarbitType):
            return VarbitT(self.width(scope, t.width))
        if isinstance(t, ast.BoolType):
            return BoolT()
        if isinstance(t, ast.ErrorType):
            return ErrorT()
        if isinstance(t, ast.StringType):
            return StringT()
        if isinstance(t, ast.InfIntType):
            return InfIntT()
        if isinstance(t, ast.VoidType):
            return VoidT()
        if isinstance(t, ast.MatchKindType):
            return MatchKindT()
        if isinstance(t, ast.DontCareType):
            return DontCareT()
        if isinstance(t, ast.TupleType):
            return TupleT(tuple(self.resolve_type(scope, e) for e in t.elements))
        if isinstance(t, ast.StackType):
            elem = self.resolve_type(scope, t.element)
            if not isinstance(elem, (HeaderT, HeaderUnionT)):
                raise self.fail(t.loc, f"header stack elements must be headers or header unions, not {elem}")
            return StackT(elem, self.const_int(scope, t.size, None))
        if isinstance(t, ast.NamedType):
            found = (self.globals if t.is_global else scope).lookup_type(t.name)
            if found is None:
                raise self.fail(t.loc, f"{t.name}: declaration not found")
            if t.type_args:
                args = tuple(self.resolve_type(scope, a) for a in t.type_args)
                if isinstance(found, ExternT):
                    params = found.decl.type_params if found.decl is not None else ()
                    if len(params) != len(args):
                        raise self.fail(t.loc, f"{t.name}: expected {len(params)} type arguments, got {len(args)}")
                    return ExternT(found.name, args, found.decl)
                if isinstance(found, StructLikeT) and found.decl is not None and found.decl.type_params:
                    sub = dict(zip(found.decl.type_params, args, strict=False))
                    fields = tuple((n, substitute(ft, sub)) for n, ft in found.fields)
                    name = f"{found.name}<{', '.join(str(a) for a in args)}>"
                    return type(found)(name, fields, found.annotations, found.decl)
                return found
            return found
        raise self.fail(t.loc, f"unsupported type {type(t).__name__}")

    def width(self, scope: Scope, e: ast.Expression) -> int:
        w = self.const_int(scope, e, None)
        if w < 0 or w > 2048:
            raise self.fail(e.loc, f"invalid width {w}")
        return w

    def const_int(self, scope: Scope, e: ast.Expression, expected: P4Type | None) -> int:
        self.expr(scope, e, expected)
        if e not in self.out.consts or not isinstance(self.out.consts[e], int) or isinstance(
                self.out.consts[e], bool):
            raise self.fail(e.loc, "expected a compile-time integer constant")
        return int(self.out.consts[e])

    # --------------------------------------------------------------------------------------------- declarations
    def const_decl(self, scope: Scope, decl: ast.ConstantDeclaration) -> None:
        t = self.resolve_type(scope, decl.type)
        self.expr(scope, decl.value, t)
        self.convert(decl.value, t, f"{decl.name}")
        if decl.value not in self.out.consts:
            raise self.fail(decl.value.loc, f"{decl.name}: the initializer of a constant must be a compile-time constant")
        var = Var(decl.name, t, "const", node=decl, value=self.out.consts[decl.value], owner=scope.owner)
        self.declare_value(scope, decl.name, var, decl.loc)
        self.out.decl_vars[decl] = var

    def params(self, scope: Scope, params: tuple[ast.Parameter, ...], owner: Any, kind: str = "param") -> None:
        for p in params:
            try:
                t = self.resolve_type(scope, p.type)
            except _Abort:
                t = VoidT()
            var = Var(p.name, t, kind, direction=p.direction, node=p, owner=owner)
            self.declare_value(scope, p.name, var, p.loc)
            self.out.decl_vars[p] = var

    def action_decl(self, scope: Scope, decl: ast.ActionDeclaration) -> None:
        inner = scope.child(decl)
        self.out.scopes[decl] = inner
        self.params(inner, decl.params, decl)
        seen_directionless = False
        for p in decl.params:
            if p.direction is None:
                seen_directionless = True
            elif seen_directionless:
                self.error(p.loc, f"{p.name}: directional parameters must precede directionless (action data) ones")
        self._in_action += 1
        self._return_type.append(None)
        try:
            self.block(inner, decl.body)
        finally:
            self._in_action -= 1
            self._return_type.pop()

    def function_decl(self, scope: Scope, decl: ast.FunctionDeclaration) -> None:
        inner = scope.child(decl)
        for tp in decl.type_params:
            inner.types[tp] = TypeVarT(tp)
        self.out.scopes[decl] = inner
        self.params(inner, decl.params, decl)
        self._return_type.append(self.resolve_type(inner, decl.return_type))
        try:
            self.block(inner, decl.body)
        finally:
            self._return_type.pop()

    def parser_decl(self, scope: Scope, decl: ast.ParserDeclaration) -> None:
        inner = scope.child(decl)
        self.out.scopes[decl] = inner
        self.params(inner, decl.params, decl)
        self.params(inner, decl.constructor_params, decl, "ctor_param")
        states = {s.name: s for s in decl.states}
        for name in ("accept", "reject"):
            inner.values[name] = name
        for s in decl.states:
            if s.name in ("accept", "reject"):
                self.error(s.loc, f"{s.name}: state name is reserved")
            self.declare_value(inner, s.name, s, s.loc)
        if "start" not in states:
            self.error(decl.loc, f"{decl.name}: parser has no start state")
        self._in_parser += 1
        try:
            for local in decl.locals:
                self.local_decl(inner, local)
            for s in decl.states:
                sscope = inner.child()
                for st in s.statements:
                    self.stmt(sscope, st)
                if s.transition is not None:  # none: an implicit transition to reject, as p4c does
                    self.transition(sscope, s.transition)
        finally:
            self._in_parser -= 1

    def transition(self, scope: Scope, tr: ast.TransitionStatement) -> None:
        target = tr.target
        if isinstance(target, ast.Name):
            self.state_ref(scope, target)
            return
        if isinstance(target, ast.SelectExpression):
            try:
                key_types = [self.expr(scope, k) for k in target.keys]
            except _Abort:
                return
            for case in target.cases:
                try:
                    self.keyset(scope, case.keyset, key_types, target.keys)
                except _Abort:
                    pass
                self.state_ref(scope, case.state)
            return
        self.error(target.loc, "transition must name a state or be a select expression")

    def state_ref(self, scope: Scope, name: ast.Name) -> None:
        found = scope.lookup_value(name.name)
        if not (isinstance(found, ast.ParserState) or found in ("accept", "reject")):
            self.error(name.loc, f"{name.name}: state not found")
            return
        self.out.refs[name] = found

    def keyset(self, scope: Scope, ks: ast.Expression, key_types: list[P4Type], keys: tuple[ast.Expression, ...]) -> None:
        if isinstance(ks, (ast.DefaultExpression, ast.DontCare)):
            self.out.types[ks] = DontCareT()
            return
        if isinstance(ks, ast.TupleKeyset):
            elements = list(ks.elements)
        elif len(key_types) > 1 and isinstance(ks, ast.ListExpression):
            elements = list(ks.items)
        else:
            elements = [ks]
        if len(elements) == 1 and len(key_types) > 1:
            # a value set of a struct type, or a single name covering the tuple
            if isinstance(ks, ast.Name):
                found = scope.lookup_value(ks.name)
                if isinstance(found, Var) and isinstance(found.type, ExternT) and found.type.name == "value_set":
                    self.out.refs[ks] = found
                    self.out.types[ks] = found.type
                    return
            raise self.fail(ks.loc, f"select has {len(key_types)} keys but the case has 1 element")
        if len(elements) != len(key_types):
            raise self.fail(ks.loc, f"select has {len(key_types)} keys but the case has {len(elements)} elements")
        for el, kt in zip(elements, key_types, strict=False):
            self.keyset_element(scope, el, kt)

    def keyset_element(self, scope: Scope, el: ast.Expression, kt: P4Type) -> None:
        if isinstance(el, (ast.DontCare, ast.DefaultExpression)):
            self.out.types[el] = DontCareT()
            return
        if isinstance(el, ast.BinaryOp) and el.op in ("&&&", ".."):
            self.expr(scope, el.left, kt)
            self.convert(el.left, kt, "keyset")
            self.expr(scope, el.right, kt)
            self.convert(el.right, kt, "keyset")
            self.out.types[el] = kt
            if el.left in self.out.consts and el.right in self.out.consts:
                self.out.consts[el] = (self.out.consts[el.left], self.out.consts[el.right])
            return
        if isinstance(el, ast.Name):
            found = scope.lookup_value(el.name)
            if isinstance(found, Var) and isinstance(found.type, ExternT) and found.type.name == "value_set":
                self.out.refs[el] = found
                self.out.types[el] = found.type
                return
        self.expr(scope, el, kt)
        self.convert(el, kt, "keyset")

    def control_decl(self, scope: Scope, decl: ast.ControlDeclaration) -> None:
        inner = scope.child(decl)
        self.out.scopes[decl] = inner
        self.params(inner, decl.params, decl)
        self.params(inner, decl.constructor_params, decl, "ctor_param")
        for local in decl.locals:
            try:
                self.local_decl(inner, local)
            except _Abort:
                pass
        self._return_type.append(None)
        try:
            self.block(inner.child(), decl.body)
        finally:
            self._return_type.pop()

    def local_decl(self, scope: Scope, decl: ast.Node) -> None:
        if isinstance(decl, ast.ActionDeclaration):
            self.declare_value(scope, decl.name, decl, decl.loc)
            self.action_decl(scope, decl)
        elif isinstance(decl, ast.TableDeclaration):
            self.declare_value(scope, decl.name, decl, decl.loc)
            self.table_decl(scope, decl)
        elif isinstance(decl, ast.Instantiation):
            self.instantiation(scope, decl)
        elif isinstance(decl, ast.ValueSetDeclaration):
            et = self.resolve_type(scope, decl.element_type)
            size = self.const_int(scope, decl.size, None)
            var = Var(decl.name, ExternT("value_set", (et,)), "instance", node=decl, value=size, owner=scope.owner)
            self.declare_value(scope, decl.name, var, decl.loc)
            self.out.decl_vars[decl] = var
        elif isinstance(decl, (ast.VariableDeclaration, ast.ConstantDeclaration)):
            self.stmt(scope, decl)
        elif isinstance(decl, ast.FunctionDeclaration):
            self.declare_value(scope, decl.name, decl, decl.loc)
            self.function_decl(scope, decl)
        else:
            self.type_decl(scope, decl)

    def instantiation(self, scope: Scope, decl: ast.Instantiation) -> None:
        t = self.resolve_type(scope, decl.type)
        var = Var(decl.name, t, "instance", node=decl, owner=scope.owner)
        if isinstance(t, ExternT):
            ctors = [c for c in t.decl.constructors] if t.decl is not None else []
            sub = dict(zip(t.decl.type_params, t.args, strict=False)) if t.decl is not None else {}
            matching = [c for c in ctors if _arity_ok(c.params, decl.args)]
            if not matching:
                raise self.fail(decl.loc, f"{decl.name}: no constructor of {t.name} takes {len(decl.args)} arguments")
            ctor = matching[0]
            info = self.bind_args(scope, decl.loc, decl.name, ctor.params, decl.args, sub)
            var.value = info
        elif isinstance(t, BlockT):
            params = t.decl.constructor_params if hasattr(t.decl, "constructor_params") else t.decl.params
            if t.kind == "package":
                params = t.decl.params
            if len(decl.args) != len(params):
                raise self.fail(decl.loc, f"{decl.name}: {t.name} expects {len(params)} arguments, got {len(decl.args)}")
            for a in decl.args:
                self.expr(scope, a.value)
        else:
            raise self.fail(decl.loc, f"{decl.name}: cannot instantiate {t}")
        self.declare_value(scope, decl.name, var, decl.loc)
        self.out.decl_vars[decl] = var

    def table_decl(self, scope: Scope, decl: ast.TableDeclaration) -> None:
        action_names: list[str] = []
        props = {p.name: p for p in decl.properties}
        for prop in decl.properties:
            if isinstance(prop, ast.KeyProperty):
                for ke in prop.elements:
                    try:
                        kt = self.expr(scope, ke.expr)
                    except _Abort:
                        continue
                    if ke.match_kind not in self.out.match_kinds:
                        self.error(ke.match_kind_loc or ke.loc, f"{ke.match_kind}: match kind not found")
                    if not isinstance(underlying(kt), (BitsT, BoolT)) and not isinstance(kt, (EnumT, ErrorT)):
                        self.error(ke.expr.loc, f"key field of type {kt} cannot be matched")
            elif isinstance(prop, ast.ActionsProperty):
                for ref in prop.actions:
                    action = self.action_ref(scope, ref, bind_all=False)
                    if action is not None:
                        action_names.append(action.name)
            elif isinstance(prop, ast.DefaultActionProperty):
                pass
            elif isinstance(prop, ast.EntriesProperty):
                pass
            elif prop.value is not None:
                try:
                    self.expr(scope, prop.value)
                except _Abort:
                    pass
        key = props.get("key")
        default = props.get("default_action")
        if isinstance(default, ast.DefaultActionProperty) and default.action is not None:
            action = self.action_ref(scope, default.action, bind_all=True)
            if action is not None and action.name not in action_names:
                self.error(default.action.loc, f"{decl.name}: default action {action.name} is not in the actions list")
        entries = props.get("entries")
        if isinstance(entries, ast.EntriesProperty):
            key_elems = key.elements if isinstance(key, ast.KeyProperty) else ()
            key_types = [self.out.types.get(ke.expr, VoidT()) for ke in key_elems]
            for entry in entries.entries:
                try:
                    self.keyset(scope, entry.keyset, key_types, tuple(ke.expr for ke in key_elems))
                except _Abort:
                    pass
                action = self.action_ref(scope, entry.action, bind_all=True)
                if action is not None and action.name not in action_names:
                    self.error(entry.action.loc, f"{decl.name}: action {action.name} is not in the actions list")
                if entry.priority is not None:
                    try:
                        self.const_int(scope, entry.priority, None)
                    except _Abort:
                        pass
        size = props.get("size")
        if size is not None and size.value is not None and size.value not in self.out.consts:
            self.error(size.loc, f"{decl.name}: size must be a compile-time constant")

    def action_ref(self, scope: Scope, ref: ast.ActionRef, *, bind_all: bool) -> ast.ActionDeclaration | None:
        found = (self.globals if ref.name.is_global else scope).lookup_value(ref.name.name)
        if not isinstance(found, ast.ActionDeclaration):
            self.error(ref.name.loc, f"{ref.name.name}: {'not an action' if found is not None else 'declaration not found'}")
            return None
        self.out.refs[ref.name] = found
        self.out.refs[ref] = found
        if ref.args is None:
            if bind_all and any(p.direction is None for p in found.params):
                self.error(ref.loc, f"{found.name}: action data arguments missing")
            return found
        params = list(found.params) if bind_all else [p for p in found.params if p.direction is not None]
        if len(ref.args) != len(params):
            what = "all parameters" if bind_all else "the directional parameters"
            self.error(ref.loc, f"{found.name}: expected {len(params)} arguments ({what}), got {len(ref.args)}")
            return found
        for p, a in zip(params, ref.args, strict=False):
            try:
                pt = self.resolve_type(self.out.scopes.get(found, scope), p.type)
                self.expr(scope, a.value, pt)
                self.convert(a.value, pt, f"{found.name}: argument {p.name}")
                if bind_all and p.direction is None and a.value not in self.out.consts:
                    self.error(a.value.loc, f"{found.name}: action data {p.name} must be a compile-time constant")
            except _Abort:
                pass
        return found

    # ------------------------------------------------------------------------------------------------ statements
    def block(self, scope: Scope, block: ast.BlockStatement) -> None:
        for st in block.statements:
            try:
                self.stmt(scope, st)
            except _Abort:
                pass

    def stmt(self, scope: Scope, st: ast.Statement) -> None:
        if isinstance(st, ast.BlockStatement):
            self.block(scope.child(), st)
        elif isinstance(st, ast.AssignmentStatement):
            lt = self.expr(scope, st.left)
            self.check_lvalue(scope, st.left)
            self.expr(scope, st.right, lt)
            self.convert(st.right, lt, "assignment")
        elif isinstance(st, ast.MethodCallStatement):
            self.expr(scope, st.call)
        elif isinstance(st, ast.IfStatement):
            ct = self.expr(scope, st.cond, BoolT())
            if not isinstance(ct, BoolT):
                self.error(st.cond.loc, f"Condition of an if statement must be of type bool, not {ct}")
            self.stmt(scope.child(), st.then)
            if st.else_ is not None:
                self.stmt(scope.child(), st.else_)
        elif isinstance(st, ast.SwitchStatement):
            self.switch(scope, st)
        elif isinstance(st, ast.ReturnStatement):
            if not self._return_type:
                raise self.fail(st.loc, "return outside of a function, action or control")
            rt = self._return_type[-1]
            if st.value is not None:
                if rt is None or isinstance(rt, VoidT):
                    raise self.fail(st.loc, "return with a value in a block that returns nothing")
                self.expr(scope, st.value, rt)
                self.convert(st.value, rt, "return")
            elif rt is not None and not isinstance(rt, VoidT):
                raise self.fail(st.loc, f"return without a value in a function returning {rt}")
        elif isinstance(st, ast.ExitStatement):
            if self._in_parser:
                raise self.fail(st.loc, "exit is not allowed in a parser")
        elif isinstance(st, ast.EmptyStatement):
            pass
        elif isinstance(st, ast.VariableDeclaration):
            t = self.resolve_type(scope, st.type)
            if st.init is not None:
                self.expr(scope, st.init, t)
                self.convert(st.init, t, st.name)
            var = Var(st.name, t, "local", node=st, owner=scope.owner)
            if st.name in scope.values:
                self.error(st.loc, f"{st.name}: duplicate declaration")
            scope.values[st.name] = var
            self.out.decl_vars[st] = var
        elif isinstance(st, ast.ConstantDeclaration):
            self.const_decl(scope, st)
        elif isinstance(st, ast.Instantiation):
            self.instantiation(scope, st)
        else:
            raise self.fail(st.loc, f"unsupported statement {type(st).__name__}")

    def switch(self, scope: Scope, st: ast.SwitchStatement) -> None:
        t = self.expr(scope, st.expr)
        seen: set[str] = set()
        for case in st.cases:
            label = case.label
            if isinstance(label, ast.DefaultExpression):
                self.out.types[label] = DontCareT()
            elif isinstance(t, ActionEnumT):
                if not isinstance(label, ast.Name):
                    self.error(label.loc, "switch on action_run needs action names as labels")
                else:
                    action = scope.lookup_value(label.name)
                    table_actions = _table_action_names(t.decl)
                    if not isinstance(action, ast.ActionDeclaration) or label.name not in table_actions:
                        self.error(label.loc, f"{label.name}: not an action of table {t.decl.name}")
                    else:
                        self.out.refs[label] = action
                    if label.name in seen:
                        self.error(label.loc, f"{label.name}: duplicate switch label")
                    seen.add(label.name)
            else:
                try:
                    self.expr(scope, label, t)
                    self.convert(label, t, "switch label")
                    if label not in self.out.consts:
                        self.error(label.loc, "switch labels must be compile-time constants")
                except _Abort:
                    pass
            if case.body is not None:
                self.stmt(scope, case.body)

    def check_lvalue(self, scope: Scope, e: ast.Expression) -> None:
        root = e
        while True:
            if isinstance(root, ast.Member):
                if isinstance(self.out.types.get(root.expr), StackT) and root.member in ("last", "lastIndex", "size"):
                    if root.member != "last":
                        raise self.fail(e.loc, f"{_text(e)}: cannot be the target of an assignment")
                root = root.expr
            elif isinstance(root, (ast.Index, ast.Slice)):
                root = root.expr
            else:
                break
        if not isinstance(root, ast.Name):
            raise self.fail(e.loc, f"{_text(e)}: cannot be the target of an assignment")
        ref = self.out.refs.get(root)
        if not isinstance(ref, Var) or ref.kind in ("const", "instance", "ctor_param"):
            raise self.fail(e.loc, f"{_text(e)}: cannot be the target of an assignment")
        if ref.kind == "param" and ref.direction in ("in", None):
            what = "an 'in' parameter" if ref.direction == "in" else "a directionless parameter"
            raise self.fail(e.loc, f"{_text(e)}: cannot assign to {what}")

    # ----------------------------------------------------------------------------------------------- expressions
    def expr(self, scope: Scope, e: ast.Expression, expected: P4Type | None = None) -> P4Type:
        t = self._expr(scope, e, expected)
        self.out.types[e] = t
        return t

    def _expr(self, scope: Scope, e: ast.Expression, expected: P4Type | None) -> P4Type:
        consts = self.out.consts
        if isinstance(e, ast.IntLiteral):
            if e.width is not None:
                if e.width == 0 and e.value != 0:
                    raise self.fail(e.loc, "a 0-width literal must be 0")
                consts[e] = ce.wrap(e.value, e.width, e.signed)
                return BitsT(e.width, e.signed)
            consts[e] = e.value
            return InfIntT()
        if isinstance(e, ast.BoolLiteral):
            consts[e] = e.value
            return BoolT()
        if isinstance(e, ast.StringLiteral):
            consts[e] = e.value
            return StringT()
        if isinstance(e, ast.Name):
            return self.name(scope, e)
        if isinstance(e, ast.Member):
            return self.member(scope, e)
        if isinstance(e, ast.Index):
            base = self.expr(scope, e.expr)
            it = self.expr(scope, e.index)
            if isinstance(base, StackT):
                if not isinstance(underlying(it), (BitsT, InfIntT)):
                    raise self.fail(e.index.loc, f"a stack index must be an integer, not {it}")
                if e.index in consts and not 0 <= consts[e.index] < base.size:
                    raise self.fail(e.index.loc, f"index {consts[e.index]} out of bounds of {base}")
                return base.element
            if isinstance(base, TupleT):
                if e.index not in consts:
                    raise self.fail(e.index.loc, "a tuple index must be a compile-time constant")
                i = consts[e.index]
                if not 0 <= i < len(base.elements):
                    raise self.fail(e.index.loc, f"index {i} out of bounds of {base}")
                return base.elements[i]
            raise self.fail(e.loc, f"{_text(e.expr)} of type {base} cannot be indexed")
        if isinstance(e, ast.Slice):
            base = self.expr(scope, e.expr)
            hi = self.const_int(scope, e.hi, None)
            lo = self.const_int(scope, e.lo, None)
            ub = underlying(base)
            if isinstance(ub, InfIntT):
                if e.expr in consts:
                    consts[e] = (consts[e.expr] >> lo) & ce.mask(hi - lo + 1)
                return BitsT(hi - lo + 1)
            if not isinstance(ub, BitsT):
                raise self.fail(e.loc, f"bit slice of a value of type {base}")
            if hi < lo:
                raise self.fail(e.loc, f"bit slice [{hi}:{lo}]: the high index is below the low index")
            if hi >= ub.width:
                raise self.fail(e.loc, f"bit slice [{hi}:{lo}] out of range of {base}")
            if e.expr in consts:
                consts[e] = (consts[e.expr] >> lo) & ce.mask(hi - lo + 1)
            return BitsT(hi - lo + 1)
        if isinstance(e, ast.Call):
            return self.call(scope, e, expected)
        if isinstance(e, ast.ListExpression):
            exp_elems: tuple[P4Type, ...] | None = None
            if isinstance(expected, (TupleT, ListT)) and len(expected.elements) == len(e.items):
                exp_elems = expected.elements
            elif isinstance(expected, (StructT, HeaderT)) and len(expected.fields) == len(e.items):
                exp_elems = tuple(ft for _, ft in expected.fields)
            types = tuple(self.expr(scope, item, exp_elems[i] if exp_elems else None) for i, item in enumerate(e.items))
            return ListT(types)
        if isinstance(e, ast.StructExpression):
            target = self.resolve_type(scope, e.type) if e.type is not None else expected
            fields = []
            for f in e.fields:
                ft = target.field_type(f.name) if isinstance(target, StructLikeT) else None
                fields.append((f.name, self.expr(scope, f.value, ft)))
            if e.type is not None:
                assert target is not None
                self.out.types[e] = StructExprT(tuple(fields))
                self.convert(e, target, "structure initializer")
                return target
            return StructExprT(tuple(fields))
        if isinstance(e, ast.UnaryOp):
            return self.unary(scope, e, expected)
        if isinstance(e, ast.BinaryOp):
            return self.binary(scope, e, expected)
        if isinstance(e, ast.Ternary):
            ct = self.expr(scope, e.cond, BoolT())
            if not isinstance(ct, BoolT):
                raise self.fail(e.cond.loc, f"the condition of ?: must be bool, not {ct}")
            tt = self.expr(scope, e.then, expected)
            et = self.expr(scope, e.else_, expected if isinstance(tt, InfIntT) else tt)
            if isinstance(tt, InfIntT) and isinstance(et, InfIntT) and isinstance(expected, BitsT) \
                    and e.cond not in consts:
                self.convert(e.then, expected, "?:")
                self.convert(e.else_, expected, "?:")
                tt = et = expected
            if isinstance(tt, InfIntT) and not isinstance(et, InfIntT):
                self.convert(e.then, et, "?:")
                tt = et
            elif isinstance(et, InfIntT) and not isinstance(tt, InfIntT):
                self.convert(e.else_, tt, "?:")
            elif tt != et:
                raise self.fail(e.loc, f"?: branches have different types {tt} and {et}")
            if e.cond in consts and e.then in consts and e.else_ in consts:
                consts[e] = consts[e.then] if consts[e.cond] else consts[e.else_]
            if isinstance(tt, InfIntT) and e not in consts:
                raise self.fail(e.loc, "?: with integer literals needs a width (cast one branch)")
            return tt
        if isinstance(e, ast.Cast):
            return self.cast(scope, e)
        if isinstance(e, (ast.DontCare,)):
            return DontCareT()
        if isinstance(e, ast.DefaultExpression):
            return DontCareT()
        if isinstance(e, ast.InvalidHeader):
            if expected is None or not isinstance(expected, (HeaderT, HeaderUnionT)):
                raise self.fail(e.loc, "{#} needs a header or header union context")
            return expected
        if isinstance(e, ast.TupleKeyset):
            raise self.fail(e.loc, "a keyset is only allowed in select cases and table entries")
        raise self.fail(e.loc, f"unsupported expression {type(e).__name__}")

    def name(self, scope: Scope, e: ast.Name) -> P4Type:
        found = (self.globals if e.is_global else scope).lookup_value(e.name)
        if found is None:
            t = (self.globals if e.is_global else scope).lookup_type(e.name)
            if t is not None:
                self.out.refs[e] = t
                return TypeRefT(t)
            raise self.fail(e.loc, f"{e.name}: declaration not found")
        self.out.refs[e] = found
        if isinstance(found, Var):
            if found.kind == "const" and found.value is not None:
                self.out.consts[e] = found.value
            return found.type
        if isinstance(found, ast.ActionDeclaration):
            return CallableT("action", found.name, found)
        if isinstance(found, ast.FunctionDeclaration):
            return CallableT("function", found.name, found)
        if isinstance(found, list):
            return CallableT("extern_function", e.name, found)
        if isinstance(found, ast.TableDeclaration):
            return TableT(found)
        if isinstance(found, ast.ParserState):
            raise self.fail(e.loc, f"{e.name}: a state is not a value")
        raise self.fail(e.loc, f"{e.name}: not a value")

    def member(self, scope: Scope, e: ast.Member) -> P4Type:
        base = self.expr(scope, e.expr)
        m = e.member
        consts = self.out.consts
        if isinstance(base, TypeRefT):
            target = base.target
            if isinstance(target, ErrorT):
                if m not in self.out.error_codes:
                    raise self.fail(e.loc, f"error.{m}: declaration not found")
                consts[e] = ("error", m)
                return ErrorT()
            if isinstance(target, EnumT):
                if m not in target.members:
                    raise self.fail(e.loc, f"{target.name}.{m}: declaration not found")
                consts[e] = target.values[m] if target.underlying is not None and m in target.values else (
                    "enum", target.name, m)
                return target
            if isinstance(target, ExternT) or isinstance(target, BlockT):
                raise self.fail(e.loc, f"{target}.{m}: static members are not supported")
            raise self.fail(e.loc, f"{target} has no member {m}")
        if isinstance(base, (StructT, HeaderT, HeaderUnionT)):
            ft = base.field_type(m)
            if ft is not None:
                return ft
            if isinstance(base, (HeaderT, HeaderUnionT)) and m in ("isValid", "setValid", "setInvalid"):
                if isinstance(base, HeaderUnionT) and m != "isValid":
                    raise self.fail(e.loc, f"{m}: not a method of header union {base}")
                return CallableT("header_method", m)
            if isinstance(base, HeaderT) and m in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits",
                                                   "maxSizeInBytes"):
                return CallableT("header_method", m)
            raise self.fail(e.loc, f"{_text(e.expr)}.{m}: {base} has no field {m}")
        if isinstance(base, StackT):
            if m in ("next", "last"):
                if m == "next" and not self._in_parser:
                    raise self.fail(e.loc, f"{_text(e)}: .next is only allowed in parsers")
                return base.element
            if m == "lastIndex":
                return BitsT(32)
            if m == "size":
                consts[e] = base.size
                return BitsT(32)
            if m in ("push_front", "pop_front"):
                return CallableT("stack_method", m)
            raise self.fail(e.loc, f"{_text(e.expr)}.{m}: header stacks have no member {m}")
        if isinstance(base, ExternT):
            if base.decl is None or not any(md.name == m for md in base.decl.methods):
                raise self.fail(e.loc, f"{_text(e.expr)}.{m}: {base.name} has no method {m}")
            return CallableT("extern_method", m, base)
        if isinstance(base, TableT):
            if m != "apply":
                raise self.fail(e.loc, f"{_text(e)}: a table has only the apply method")
            return CallableT("table_apply", base.decl.name, base.decl)
        if isinstance(base, BlockT):
            if m != "apply":
                raise self.fail(e.loc, f"{_text(e)}: only apply can be called on a {base.kind}")
            return CallableT("block_apply", base.name, base.decl)
        if isinstance(base, ApplyResultT):
            if m in ("hit", "miss"):
                return BoolT()
            if m == "action_run":
                return ActionEnumT(base.decl)
            raise self.fail(e.loc, f"{_text(e)}: a table apply result has hit, miss and action_run only")
        raise self.fail(e.loc, f"{_text(e.expr)} of type {base} has no member {m}")

    def unary(self, scope: Scope, e: ast.UnaryOp, expected: P4Type | None) -> P4Type:
        consts = self.out.consts
        if e.op == "!":
            t = self.expr(scope, e.operand, BoolT())
            if not isinstance(t, BoolT):
                raise self.fail(e.loc, f"!: operand must be bool, not {t}")
            if e.operand in consts:
                consts[e] = not consts[e.operand]
            return t
        t = self.expr(scope, e.operand, expected)
        ut = underlying(t) if not isinstance(t, EnumT) else t
        if e.op == "~":
            if not isinstance(ut, BitsT):
                raise self.fail(e.loc, f"~: operand must be bit<> or int<>, not {t}")
            if e.operand in consts:
                consts[e] = ce.wrap(~consts[e.operand], ut.width, ut.signed)
            return ut
        if e.op in ("-", "+"):
            if not isinstance(ut, (BitsT, InfIntT)):
                raise self.fail(e.loc, f"{e.op}: operand must be numeric, not {t}")
            if e.operand in consts:
                v = -consts[e.operand] if e.op == "-" else consts[e.operand]
                consts[e] = ce.wrap(v, ut.width, ut.signed) if isinstance(ut, BitsT) else v
            return ut
        raise self.fail(e.loc, f"unsupported unary operator {e.op}")

    def binary(self, scope: Scope, e: ast.BinaryOp, expected: P4Type | None) -> P4Type:
        op = e.op
        consts = self.out.consts
        if op in ("&&&", ".."):
            raise self.fail(e.loc, f"{op} is only allowed in keysets")
        if op in ("&&", "||"):
            lt = self.expr(scope, e.left, BoolT())
            rt = self.expr(scope, e.right, BoolT())
            for side, st in ((e.left, lt), (e.right, rt)):
                if not isinstance(st, BoolT):
                    raise self.fail(side.loc, f"{op}: operands must be bool, not {st}")
            if e.left in consts and e.right in consts:
                consts[e] = (consts[e.left] and consts[e.right]) if op == "&&" else (consts[e.left] or consts[e.right])
            return BoolT()
        if op in ("<<", ">>"):
            lt = self.expr(scope, e.left, expected)
            rt = self.expr(scope, e.right)
            ul = underlying(lt)
            ur = underlying(rt)
            if isinstance(ur, BitsT) and ur.signed:
                raise self.fail(e.right.loc, f"{op}: the shift amount must be unsigned, not {rt}")
            if not isinstance(ur, (BitsT, InfIntT)):
                raise self.fail(e.right.loc, f"{op}: the shift amount must be an unsigned integer, not {rt}")
            if e.right in consts and consts[e.right] < 0:
                raise self.fail(e.right.loc, f"{op}: negative shift amount")
            if isinstance(ul, InfIntT):
                if e.right not in consts:
                    raise self.fail(e.loc, f"{_text(e)}: the left operand of a shift by a run-time amount needs a width")
                if e.left in consts:
                    consts[e] = ce.binary(op, consts[e.left], consts[e.right], None, True)
                return ul
            if not isinstance(ul, BitsT):
                raise self.fail(e.left.loc, f"{op}: cannot shift a value of type {lt}")
            if isinstance(ur, InfIntT):
                self.out.types[e.right] = BitsT(32)  # a constant amount; any width holds it
            if e.left in consts and e.right in consts:
                consts[e] = ce.binary(op, consts[e.left], consts[e.right], ul.width, ul.signed)
            return ul
        if op == "++":
            lt = self.expr(scope, e.left)
            rt = self.expr(scope, e.right)
            ul, ur = underlying(lt), underlying(rt)
            if not isinstance(ul, BitsT) or not isinstance(ur, BitsT):
                raise self.fail(e.loc, f"++: operands must have a width (bit<> or int<>), not {lt} and {rt}")
            if e.left in consts and e.right in consts:
                v = (ce.to_unsigned(consts[e.left], ul.width) << ur.width) | ce.to_unsigned(consts[e.right], ur.width)
                consts[e] = ce.wrap(v, ul.width + ur.width, ul.signed)
            return BitsT(ul.width + ur.width, ul.signed)
        # arithmetic, bitwise and comparisons: both sides of one type, unsized literals adopt the other's type
        hint = expected if op in ARITH_OPS else None
        lt = self.expr(scope, e.left, hint)
        rt = self.expr(scope, e.right, lt if not isinstance(lt, InfIntT) else hint)
        if isinstance(lt, InfIntT) and not isinstance(rt, InfIntT):
            self.expr(scope, e.left, rt)
            self.convert(e.left, rt, op)
            lt = rt
        elif isinstance(rt, InfIntT) and not isinstance(lt, InfIntT):
            self.convert(e.right, lt, op)
            rt = lt
        if op in COMPARE_OPS:
            if op in ("==", "!="):
                if lt != rt and not (isinstance(lt, (ListT, TupleT)) or isinstance(rt, (ListT, TupleT))):
                    if underlying(lt) == underlying(rt) and isinstance(underlying(lt), BitsT):
                        pass
                    else:
                        raise self.fail(e.loc, f"{op}: cannot compare values of different types {lt} and {rt}")
                if isinstance(lt, (ExternT, TableT, CallableT, StringT)):
                    raise self.fail(e.loc, f"{op}: values of type {lt} cannot be compared")
            else:
                ul = underlying(lt) if not isinstance(lt, EnumT) or lt.underlying else lt
                if not isinstance(ul, (BitsT, InfIntT)) or (lt != rt and underlying(lt) != underlying(rt)):
                    raise self.fail(e.loc, f"{op}: cannot compare values of types {lt} and {rt}")
            if e.left in consts and e.right in consts:
                a, b = consts[e.left], consts[e.right]
                consts[e] = {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
            return BoolT()
        ul, ur = underlying(lt), underlying(rt)
        if isinstance(ul, InfIntT) and isinstance(ur, InfIntT):
            if e.left in consts and e.right in consts:
                if op in ("/", "%") and consts[e.right] == 0:
                    raise self.fail(e.loc, "division by zero")
                if op in ("|+|", "|-|"):
                    raise self.fail(e.loc, f"{op}: saturating arithmetic needs a width")
                consts[e] = ce.binary(op, consts[e.left], consts[e.right], None, True)
            return ul
        if not isinstance(ul, BitsT) or not isinstance(ur, BitsT):
            raise self.fail(e.loc, f"{op}: operands must be bit<> or int<>, not {lt} and {rt}")
        if ul != ur:
            raise self.fail(e.loc, f"{_text(e)}: cannot operate on values with different types {lt} and {rt}"
                            " (insert a cast)")
        if op in ("/", "%"):
            if ul.signed:
                raise self.fail(e.loc, f"{op}: division and modulo are only defined on unsigned values")
            if e.right in consts and consts[e.right] == 0:
                raise self.fail(e.loc, "division by zero")
            power_of_two = e.right in consts and consts[e.right] > 0 and consts[e.right] & (consts[e.right] - 1) == 0
            if not (e.left in consts and e.right in consts) and not power_of_two:
                # BMv2 has no run-time division; p4c only reduces divisions by powers of two (to shifts and masks)
                raise self.fail(e.loc, f"{op}: division and modulo need compile-time constants "
                                       "(or a power-of-two divisor)")
        if e.left in consts and e.right in consts:
            consts[e] = ce.binary(op, consts[e.left], consts[e.right], ul.width, ul.signed)
        return ul

    def cast(self, scope: Scope, e: ast.Cast) -> P4Type:
        target = self.resolve_type(scope, e.type)
        src = self.expr(scope, e.expr, target)
        consts = self.out.consts
        ut, us = underlying(target), underlying(src)
        ok = False
        if isinstance(ut, BitsT):
            ok = isinstance(us, (BitsT, InfIntT)) or (isinstance(us, BoolT) and ut.width == 1)
        elif isinstance(ut, BoolT):
            ok = isinstance(us, BoolT) or (isinstance(us, BitsT) and us.width == 1 and not us.signed) or isinstance(
                us, InfIntT)
        elif isinstance(target, (StructT, HeaderT, TupleT)) and isinstance(src, (ListT, StructExprT)):
            self.convert(e.expr, target, "cast")
            return target
        else:
            ok = src == target
        if not ok:
            raise self.fail(e.loc, f"cannot cast {src} to {target}")
        if isinstance(target, EnumT) and isinstance(us, BitsT) and us != ut:
            raise self.fail(e.loc, f"cannot cast {src} to {target}: the underlying type is {ut}")
        if e.expr in consts:
            v = consts[e.expr]
            if isinstance(ut, BitsT):
                consts[e] = ce.wrap(int(v), ut.width, ut.signed)
            elif isinstance(ut, BoolT):
                consts[e] = bool(v)
        return target

    # ------------------------------------------------------------------------------------------------ conversion
    def convert(self, e: ast.Expression, target: P4Type, what: str) -> None:
        """Check that `e` (already typed) can be used where `target` is expected, applying implicit casts."""
        src = self.out.types.get(e)
        if src is None or src == target or isinstance(target, (TypeVarT, DontCareT)):
            return
        consts = self.out.consts
        ut = underlying(target)
        if isinstance(src, InfIntT):
            if isinstance(ut, BitsT) and not isinstance(target, (EnumT,)):
                if isinstance(target, NewTypeT):
                    raise self.fail(e.loc, f"{what}: cannot cast implicitly type '{src}' to type '{target}'")
                if e in consts:
                    v = consts[e]
                    consts[e] = ce.wrap(v, ut.width, ut.signed)
                self._retype_literal(e, ut)
                return
            if isinstance(ut, InfIntT):
                return
        if isinstance(src, EnumT) and src.underlying is not None and target == src.underlying:
            return
        if isinstance(src, (ListT, TupleT)) and isinstance(target, (TupleT, ListT, StructT, HeaderT)):
            items = e.items if isinstance(e, ast.ListExpression) else None
            targets = (target.elements if isinstance(target, (TupleT, ListT))
                       else tuple(ft for _, ft in target.fields))
            if len(src.elements) != len(targets):
                raise self.fail(e.loc, f"{what}: expected {len(targets)} elements, got {len(src.elements)}")
            if items is not None:
                for item, tt in zip(items, targets, strict=False):
                    self.convert(item, tt, what)
            self.out.types[e] = target
            return
        if isinstance(src, StructExprT) and isinstance(target, (StructT, HeaderT)):
            names = [n for n, _ in target.fields]
            given = [n for n, _ in src.fields]
            if sorted(names) != sorted(given):
                raise self.fail(e.loc, f"{what}: the initializer's fields {given} do not match {target}'s {names}")
            if isinstance(e, ast.StructExpression):
                for f in e.fields:
                    ft = target.field_type(f.name)
                    assert ft is not None
                    self.convert(f.value, ft, what)
            self.out.types[e] = target
            return
        if isinstance(src, (HeaderT, HeaderUnionT)) and isinstance(e, ast.InvalidHeader):
            return
        raise self.fail(e.loc, f"{what}: cannot cast implicitly type '{src}' to type '{target}'")

    def _retype_literal(self, e: ast.Expression, t: BitsT) -> None:
        """Give an unsized constant expression (and its unsized parts) a concrete type."""
        self.out.types[e] = t
        if isinstance(e, ast.BinaryOp) and e.op not in ("<<", ">>") and e.op not in COMPARE_OPS:
            for side in (e.left, e.right):
                if isinstance(self.out.types.get(side), InfIntT):
                    self._retype_literal(side, t)
        elif isinstance(e, ast.UnaryOp):
            if isinstance(self.out.types.get(e.operand), InfIntT):
                self._retype_literal(e.operand, t)
        elif isinstance(e, ast.Ternary):
            for side in (e.then, e.else_):
                if isinstance(self.out.types.get(side), InfIntT):
                    self._retype_literal(side, t)

    # ------------------------------------------------------------------------------------------------------ calls
    def call(self, scope: Scope, e: ast.Call, expected: P4Type | None) -> P4Type:
        target = e.target
        # constructor calls in package arguments: P() where P is a parser/control type
        if isinstance(target, ast.Name):
            t = scope.lookup_value(target.name) if not target.is_global else self.globals.lookup_value(target.name)
            if t is None:
                tt = (self.globals if target.is_global else scope).lookup_type(target.name)
                if isinstance(tt, BlockT):
                    self.out.refs[target] = tt
                    for a in e.args:
                        self.expr(scope, a.value)
                    self.out.calls[e] = CallInfo("constructor", tt.name, tt.decl)
                    return tt
                if isinstance(tt, ExternT):
                    ctors = [c for c in tt.decl.constructors if _arity_ok(c.params, e.args)]
                    if not ctors:
                        raise self.fail(e.loc, f"{tt.name}: no constructor takes {len(e.args)} arguments")
                    info = self.bind_args(scope, e.loc, tt.name, ctors[0].params, e.args, {})
                    info.kind = "constructor"
                    self.out.calls[e] = info
                    return tt
        ft = self.expr(scope, target)
        if not isinstance(ft, CallableT):
            raise self.fail(e.loc, f"{_text(target)} of type {ft} is not callable")
        kind = ft.kind
        if kind == "action":
            decl = ft.decl
            if self._in_parser:
                raise self.fail(e.loc, f"{decl.name}: actions cannot be called from a parser")
            act_scope = self.out.scopes.get(decl, scope)
            params = [p for p in decl.params]
            if len(e.args) > len(params):
                raise self.fail(e.loc, f"{decl.name}: too many arguments ({len(e.args)} for {len(params)} parameters)")
            missing = [p for p in params[len(e.args):]]
            if missing and any(p.direction is not None for p in missing):
                raise self.fail(e.loc, f"{decl.name}: not enough arguments ({len(e.args)} for {len(params)} parameters)")
            if missing:
                raise self.fail(e.loc, f"{decl.name}: action data parameters must be bound when calling an action "
                                       f"directly ({len(params)} arguments expected)")
            info = self.bind_args(act_scope, e.loc, decl.name, tuple(params), e.args, {}, arg_scope=scope)
            info.kind = "action"
            info.decl = decl
            self.out.calls[e] = info
            return VoidT()
        if kind == "function":
            decl = ft.decl
            fscope = self.out.scopes.get(decl, scope)
            sub = self._explicit_type_args(scope, decl.type_params, e)
            info = self.bind_args(fscope, e.loc, decl.name, decl.params, e.args, sub, arg_scope=scope)
            info.kind = "function"
            info.decl = decl
            self.out.calls[e] = info
            return substitute(self.resolve_type(fscope, decl.return_type), info.type_args)
        if kind == "extern_function":
            candidates = [d for d in ft.decl if _arity_ok(d.params, e.args)]
            if not candidates:
                counts = sorted({len(d.params) for d in ft.decl})
                raise self.fail(e.loc, f"{ft.name}: wrong number of arguments ({len(e.args)}; expected "
                                       f"{' or '.join(str(c) for c in counts)})")
            decl = candidates[0]
            sub = self._explicit_type_args(scope, decl.type_params, e)
            gscope = self.globals.child()
            for tp in decl.type_params:
                gscope.types[tp] = TypeVarT(tp)
            info = self.bind_args(gscope, e.loc, decl.name, decl.params, e.args, sub, arg_scope=scope)
            info.kind = "extern_function"
            info.decl = decl
            self.out.calls[e] = info
            return substitute(self.resolve_type(gscope, decl.return_type), info.type_args)
        if kind == "extern_method":
            assert isinstance(target, ast.Member)
            ext: ExternT = ft.decl
            methods = [md for md in ext.decl.methods if md.name == ft.name and _arity_ok(md.params, e.args)]
            if not methods:
                counts = sorted({len(md.params) for md in ext.decl.methods if md.name == ft.name})
                raise self.fail(e.loc, f"{_text(target)}: wrong number of arguments ({len(e.args)}; expected "
                                       f"{' or '.join(str(c) for c in counts)})")
            md = methods[0]
            sub = dict(zip(ext.decl.type_params, ext.args, strict=False))
            sub.update(self._explicit_type_args(scope, md.type_params, e))
            mscope = self.globals.child()
            for tp in (*ext.decl.type_params, *md.type_params):
                mscope.types[tp] = TypeVarT(tp)
            info = self.bind_args(mscope, e.loc, f"{_text(target)}", md.params, e.args, sub, arg_scope=scope)
            info.kind = "extern_method"
            info.decl = md
            info.name = md.name
            info.receiver = target.expr
            self.out.calls[e] = info
            rt = substitute(self.resolve_type(mscope, md.return_type), info.type_args)
            if isinstance(rt, TypeVarT):
                raise self.fail(e.loc, f"{_text(target)}: cannot infer the type argument {rt}; give it explicitly")
            return rt
        if kind in ("header_method", "stack_method"):
            assert isinstance(target, ast.Member)
            n_args = 1 if ft.name in ("push_front", "pop_front") else 0
            if len(e.args) != n_args:
                raise self.fail(e.loc, f"{_text(target)}: expected {n_args} arguments, got {len(e.args)}")
            for a in e.args:
                self.const_int(scope, a.value, None)
            self.out.calls[e] = CallInfo(kind, ft.name, None, receiver=target.expr,
                                         args=list(e.args))
            if ft.name == "isValid":
                return BoolT()
            if ft.name.startswith(("min", "max")):
                recv = self.out.types[target.expr]
                from p4switch.frontend.types import width_of
                w = width_of(recv) or 0
                self.out.consts[e] = w if ft.name.endswith("Bits") else w // 8
                return InfIntT()
            return VoidT()
        if kind == "table_apply":
            if e.args:
                raise self.fail(e.loc, f"{_text(target)}: apply takes no arguments")
            if self._in_action:
                raise self.fail(e.loc, f"{_text(target)}: tables cannot be applied inside actions")
            assert isinstance(target, ast.Member)
            self.out.calls[e] = CallInfo("table_apply", ft.name, ft.decl, receiver=target.expr)
            return ApplyResultT(ft.decl)
        if kind == "block_apply":
            assert isinstance(target, ast.Member)
            decl = ft.decl
            bscope = self.out.scopes.get(decl, scope)
            info = self.bind_args(bscope, e.loc, decl.name, decl.params, e.args, {}, arg_scope=scope)
            info.kind = "block_apply"
            info.decl = decl
            info.receiver = target.expr
            self.out.calls[e] = info
            return VoidT()
        raise self.fail(e.loc, f"{_text(target)}: cannot call {ft}")

    def _explicit_type_args(self, scope: Scope, type_params: tuple[str, ...], e: ast.Call) -> dict[str, P4Type]:
        if not e.type_args:
            return {}
        if len(e.type_args) != len(type_params):
            raise self.fail(e.loc, f"expected {len(type_params)} type arguments, got {len(e.type_args)}")
        return {tp: self.resolve_type(scope, ta) for tp, ta in zip(type_params, e.type_args, strict=False)}

    def bind_args(self, pscope: Scope, loc: SourceLocation, name: str, params: tuple[ast.Parameter, ...],
                  args: tuple[ast.Argument, ...], sub: dict[str, P4Type], *, arg_scope: Scope | None = None
                  ) -> CallInfo:
        """Match arguments to parameters (positional or named), check types and directions, infer type arguments."""
        ascope = arg_scope or pscope
        bound: list[ast.Argument | None] = [None] * len(params)
        if any(a.name is not None for a in args):
            index = {p.name: i for i, p in enumerate(params)}
            for a in args:
                if a.name is None or a.name not in index:
                    raise self.fail(a.loc, f"{name}: no parameter named {a.name}")
                bound[index[a.name]] = a
        else:
            if len(args) > len(params):
                raise self.fail(loc, f"{name}: too many arguments ({len(args)} for {len(params)} parameters)")
            for i, a in enumerate(args):
                bound[i] = a
        for p, b in zip(params, bound, strict=False):
            if b is None and p.default is None and not _optional(p):
                raise self.fail(loc, f"{name}: not enough arguments; parameter {p.name} is missing")
        sub = dict(sub)
        resolved: list[tuple[ast.Parameter, P4Type]] = []
        for p, arg in zip(params, bound, strict=False):
            pt = substitute(self.resolve_type(pscope, p.type), sub)
            if arg is None:
                resolved.append((p, pt))
                continue
            a = arg
            if isinstance(a.value, ast.DontCare):
                if p.direction != "out":
                    raise self.fail(a.loc, f"{name}: _ can only be passed to an out parameter")
                self.out.types[a.value] = DontCareT()
                resolved.append((p, pt))
                continue
            expected = None if _has_typevar(pt) else pt
            at = self.expr(ascope, a.value, expected)
            if _has_typevar(pt):
                if isinstance(at, InfIntT) and p.direction in ("out", "inout"):
                    raise self.fail(a.loc, f"{name}: cannot infer a type for {p.name} from an integer literal")
                _unify(pt, at, sub)
                pt = substitute(pt, sub)
                if isinstance(at, InfIntT) and isinstance(pt, TypeVarT):
                    raise self.fail(a.value.loc, f"{name}: {p.name}: an integer literal needs a width here")
            if p.direction in ("out", "inout"):
                self.check_lvalue(ascope, a.value)
                if at != pt and not isinstance(pt, (TypeVarT, DontCareT)):
                    if not (isinstance(at, EnumT) and at.underlying == pt):
                        raise self.fail(a.value.loc, f"{name}: argument {p.name} has type {at}, expected {pt}")
            else:
                self.convert(a.value, pt, f"{name}: argument {p.name}")
            resolved.append((p, pt))
        return CallInfo("call", name, None, resolved, type_args=sub, args=bound)


# ---------------------------------------------------------------------------------------------------- helpers


def _optional(p: ast.Parameter) -> bool:
    return any(a.name == "optional" for a in p.annotations)


def _arity_ok(params: tuple[ast.Parameter, ...], args: tuple[ast.Argument, ...]) -> bool:
    if any(a.name is not None for a in args):
        names = {p.name for p in params}
        return all(a.name in names for a in args)
    required = sum(1 for p in params if p.default is None and not _optional(p))
    return required <= len(args) <= len(params)


def _has_typevar(t: P4Type) -> bool:
    if isinstance(t, TypeVarT):
        return True
    if isinstance(t, (TupleT, ListT)):
        return any(_has_typevar(e) for e in t.elements)
    if isinstance(t, ExternT):
        return any(_has_typevar(a) for a in t.args)
    return False


def _unify(pattern: P4Type, actual: P4Type, sub: dict[str, P4Type]) -> None:
    if isinstance(pattern, TypeVarT):
        if pattern.name not in sub and not isinstance(actual, InfIntT):
            sub[pattern.name] = actual
        return
    if isinstance(pattern, (TupleT, ListT)) and isinstance(actual, (TupleT, ListT)):
        for p, a in zip(pattern.elements, actual.elements, strict=False):
            _unify(p, a, sub)


def substitute(t: P4Type, sub: dict[str, P4Type]) -> P4Type:
    if not sub:
        return t
    if isinstance(t, TypeVarT):
        return sub.get(t.name, t)
    if isinstance(t, TupleT):
        return TupleT(tuple(substitute(e, sub) for e in t.elements))
    if isinstance(t, ExternT):
        return ExternT(t.name, tuple(substitute(a, sub) for a in t.args), t.decl)
    if isinstance(t, StackT):
        return StackT(substitute(t.element, sub), t.size)
    return t


def _table_action_names(decl: ast.TableDeclaration) -> list[str]:
    names: list[str] = []
    for prop in decl.properties:
        if isinstance(prop, ast.ActionsProperty):
            names = [a.name.name for a in prop.actions]
    if not any(isinstance(p, ast.DefaultActionProperty) and p.action is not None for p in decl.properties):
        names.append("NoAction")  # p4c adds `@defaultonly NoAction` to tables without a default action
    return names


def _text(e: ast.Node) -> str:
    """A short source-like rendering of an expression for messages."""
    if isinstance(e, ast.Name):
        return ("." if e.is_global else "") + e.name
    if isinstance(e, ast.Member):
        return f"{_text(e.expr)}.{e.member}"
    if isinstance(e, ast.Index):
        return f"{_text(e.expr)}[{_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{_text(e.expr)}[{_text(e.hi)}:{_text(e.lo)}]"
    if isinstance(e, ast.IntLiteral):
        return e.text or str(e.value)
    if isinstance(e, ast.BoolLiteral):
        return "true" if e.value else "false"
    if isinstance(e, ast.BinaryOp):
        return f"{_text(e.left)} {e.op} {_text(e.right)}"
    if isinstance(e, ast.UnaryOp):
        return f"{e.op}{_text(e.operand)}"
    if isinstance(e, ast.Call):
        return f"{_text(e.target)}(...)"
    if isinstance(e, ast.Cast):
        return f"(...){_text(e.expr)}"
    return type(e).__name__


def expr_text(e: ast.Node) -> str:
    return _text(e)


def check_program(program: ast.Program, *, line_of: Any = None) -> TypedProgram:
    """Resolve and type-check `program`; raise `CompileError` with every diagnostic found."""
    return TypeChecker(program, line_of=line_of).run()
