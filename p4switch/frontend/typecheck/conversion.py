"""Implicit conversions: where a typed expression is used as another type (assignments, arguments, initializers,
keysets), check that P4 allows it and give unsized integer literals their concrete type."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import consteval as ce
from p4switch.frontend.typecheck.base import COMPARE_OPS
from p4switch.frontend.typecheck.typedecls import TypeResolver
from p4switch.frontend.types import (
    BitsT,
    DontCareT,
    EnumT,
    HeaderT,
    HeaderUnionT,
    InfIntT,
    ListT,
    NewTypeT,
    P4Type,
    StructExprT,
    StructT,
    TupleT,
    TypeVarT,
    underlying,
)


class ConversionChecker(TypeResolver):
    """`convert`: the one place implicit casts happen."""

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
