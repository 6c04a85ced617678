"""Type declarations (headers, structs, unions, enums, typedefs, `type`) and type references, resolved to the
checker's `P4Type`s; widths and stack sizes are compile-time integer constants."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4switch.frontend import ast
from p4switch.frontend import consteval as ce
from p4switch.frontend.scope import Scope
from p4switch.frontend.typecheck.base import CheckerBase
from p4switch.frontend.typecheck.helpers import substitute
from p4switch.frontend.typecheck.results import Abort
from p4switch.frontend.types import (
    BitsT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    HeaderUnionT,
    InfIntT,
    MatchKindT,
    NewTypeT,
    P4Type,
    StackT,
    StringT,
    StructLikeT,
    StructT,
    TupleT,
    TypeVarT,
    VarbitT,
    VoidT,
    underlying,
)

#: Type references that take no arguments, and the type each one stands for.
SIMPLE_TYPES: dict[type[ast.Type], type[P4Type]] = {
    ast.BoolType: BoolT,
    ast.ErrorType: ErrorT,
    ast.StringType: StringT,
    ast.InfIntType: InfIntT,
    ast.VoidType: VoidT,
    ast.MatchKindType: MatchKindT,
    ast.DontCareType: DontCareT,
}


class TypeResolver(CheckerBase):
    """Types, and the constant integers they are sized with."""

    if TYPE_CHECKING:
        # Types contain expressions (`bit<W + 1>`) and expressions contain types (casts); `expr` comes from
        # `ExpressionChecker`, built on this layer, and is declared here for the type checker only.
        def expr(self, scope: Scope, e: ast.Expression, expected: P4Type | None = None) -> P4Type: ...

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
                    except Abort:
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
        simple = SIMPLE_TYPES.get(type(t))
        if simple is not None:
            return simple()
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
