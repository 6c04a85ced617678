"""Calls: what a call resolves to (action, function, extern function or method, header or stack method, table or
block apply, constructor), overloads by arity, explicit and inferred type arguments, and argument binding
(positional or named, defaults, `@optional`, directions) recorded as a `CallInfo`."""

from __future__ import annotations

from p4switch.exceptions import SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.scope import Scope
from p4switch.frontend.typecheck.expressions import ExpressionChecker
from p4switch.frontend.typecheck.helpers import arity_ok, expr_text, has_typevar, is_optional, substitute, unify
from p4switch.frontend.typecheck.results import CallInfo
from p4switch.frontend.types import (
    ApplyResultT,
    BlockT,
    BoolT,
    CallableT,
    DontCareT,
    EnumT,
    ExternT,
    InfIntT,
    P4Type,
    TypeVarT,
    VoidT,
    width_of,
)


class CallChecker(ExpressionChecker):
    """Call resolution and argument matching."""

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
                    ctors = [c for c in tt.decl.constructors if arity_ok(c.params, e.args)]
                    if not ctors:
                        raise self.fail(e.loc, f"{tt.name}: no constructor takes {len(e.args)} arguments")
                    info = self.bind_args(scope, e.loc, tt.name, ctors[0].params, e.args, {})
                    info.kind = "constructor"
                    self.out.calls[e] = info
                    return tt
        ft = self.expr(scope, target)
        if not isinstance(ft, CallableT):
            raise self.fail(e.loc, f"{expr_text(target)} of type {ft} is not callable")
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
            return self.function_call(scope, e, "function", decl, self.out.scopes.get(decl, scope))
        if kind == "extern_function":
            candidates = [d for d in ft.decl if arity_ok(d.params, e.args)]
            if not candidates:
                counts = sorted({len(d.params) for d in ft.decl})
                raise self.fail(e.loc, f"{ft.name}: wrong number of arguments ({len(e.args)}; expected "
                                       f"{' or '.join(str(c) for c in counts)})")
            decl = candidates[0]
            gscope = self.globals.child()
            for tp in decl.type_params:
                gscope.types[tp] = TypeVarT(tp)
            return self.function_call(scope, e, "extern_function", decl, gscope)
        if kind == "extern_method":
            assert isinstance(target, ast.Member)
            ext: ExternT = ft.decl
            methods = [md for md in ext.decl.methods if md.name == ft.name and arity_ok(md.params, e.args)]
            if not methods:
                counts = sorted({len(md.params) for md in ext.decl.methods if md.name == ft.name})
                raise self.fail(e.loc, f"{expr_text(target)}: wrong number of arguments ({len(e.args)}; expected "
                                       f"{' or '.join(str(c) for c in counts)})")
            md = methods[0]
            sub = dict(zip(ext.decl.type_params, ext.args, strict=False))
            sub.update(self._explicit_type_args(scope, md.type_params, e))
            mscope = self.globals.child()
            for tp in (*ext.decl.type_params, *md.type_params):
                mscope.types[tp] = TypeVarT(tp)
            info = self.bind_args(mscope, e.loc, f"{expr_text(target)}", md.params, e.args, sub, arg_scope=scope)
            info.kind = "extern_method"
            info.decl = md
            info.name = md.name
            info.receiver = target.expr
            self.out.calls[e] = info
            rt = substitute(self.resolve_type(mscope, md.return_type), info.type_args)
            if isinstance(rt, TypeVarT):
                raise self.fail(e.loc, f"{expr_text(target)}: cannot infer the type argument {rt}; give it explicitly")
            return rt
        if kind in ("header_method", "stack_method"):
            assert isinstance(target, ast.Member)
            n_args = 1 if ft.name in ("push_front", "pop_front") else 0
            if len(e.args) != n_args:
                raise self.fail(e.loc, f"{expr_text(target)}: expected {n_args} arguments, got {len(e.args)}")
            for a in e.args:
                self.const_int(scope, a.value, None)
            self.out.calls[e] = CallInfo(kind, ft.name, None, receiver=target.expr,
                                         args=list(e.args))
            if ft.name == "isValid":
                return BoolT()
            if ft.name.startswith(("min", "max")):
                recv = self.out.types[target.expr]
                w = width_of(recv) or 0
                self.out.consts[e] = w if ft.name.endswith("Bits") else w // 8
                return InfIntT()
            return VoidT()
        if kind == "table_apply":
            if e.args:
                raise self.fail(e.loc, f"{expr_text(target)}: apply takes no arguments")
            if self._in_action:
                raise self.fail(e.loc, f"{expr_text(target)}: tables cannot be applied inside actions")
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
        raise self.fail(e.loc, f"{expr_text(target)}: cannot call {ft}")

    def function_call(
        self, scope: Scope, e: ast.Call, kind: str, decl: ast.FunctionDeclaration | ast.FunctionPrototype,
        fscope: Scope,
    ) -> P4Type:
        """Bind a call to a function or extern function whose parameter types resolve in `fscope`; its type is the
        return type with the type arguments (explicit or inferred) substituted."""
        sub = self._explicit_type_args(scope, decl.type_params, e)
        info = self.bind_args(fscope, e.loc, decl.name, decl.params, e.args, sub, arg_scope=scope)
        info.kind = kind
        info.decl = decl
        self.out.calls[e] = info
        return substitute(self.resolve_type(fscope, decl.return_type), info.type_args)

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
            if b is None and p.default is None and not is_optional(p):
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
            expected = None if has_typevar(pt) else pt
            at = self.expr(ascope, a.value, expected)
            if has_typevar(pt):
                if isinstance(at, InfIntT) and p.direction in ("out", "inout"):
                    raise self.fail(a.loc, f"{name}: cannot infer a type for {p.name} from an integer literal")
                unify(pt, at, sub)
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
