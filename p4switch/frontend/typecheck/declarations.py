"""Declarations with bodies or values: constants, parameters, actions (directional parameters before action data),
functions (with type parameters), instantiations (extern constructors, parser/control/package arguments), and the
locals of parsers and controls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from p4switch.exceptions import SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.scope import Scope, Var
from p4switch.frontend.typecheck.helpers import arity_ok
from p4switch.frontend.typecheck.results import Abort
from p4switch.frontend.typecheck.statements import StatementChecker
from p4switch.frontend.types import BlockT, ExternT, TypeVarT, VoidT


class DeclarationChecker(StatementChecker):
    """Constants, parameters, actions, functions, instances and block locals."""

    if TYPE_CHECKING:
        # A table is a control local; `table_decl` comes from `ControlChecker`, built on this layer, and is declared
        # here for the type checker only.
        def table_decl(self, scope: Scope, decl: ast.TableDeclaration) -> None: ...

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
            except Abort:
                t = VoidT()
            var = Var(p.name, t, kind, direction=p.direction, node=p, owner=owner)
            self.declare_value(scope, p.name, var, p.loc)
            self.out.decl_vars[p] = var

    def block_scope(self, scope: Scope, decl: ast.ParserDeclaration | ast.ControlDeclaration) -> Scope:
        """The scope of a parser's or control's body, holding its parameters and constructor parameters."""
        inner = scope.child(decl)
        self.out.scopes[decl] = inner
        self.params(inner, decl.params, decl)
        self.params(inner, decl.constructor_params, decl, "ctor_param")
        return inner

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

    def instance_name_loc(self, decl: ast.Instantiation) -> SourceLocation:
        """Where an instance's name is spelled (`T(args) name;`) on its declaration's line, else the declaration."""
        from p4switch.bmv2limits.report import name_location  # as elaborate.py does: bmv2limits imports this package

        return name_location(decl.loc, decl.name, self.line_of, last=True)

    def instantiation(self, scope: Scope, decl: ast.Instantiation) -> None:
        t = self.resolve_type(scope, decl.type)
        var = Var(decl.name, t, "instance", node=decl, owner=scope.owner)
        if isinstance(t, ExternT):
            ctors = [c for c in t.decl.constructors] if t.decl is not None else []
            sub = dict(zip(t.decl.type_params, t.args, strict=False)) if t.decl is not None else {}
            matching = [c for c in ctors if arity_ok(c.params, decl.args)]
            if not matching:
                # p4c's wording and place: the instance's name (testdata/p4_16_bmv_errors/packet_in-bmv2.p4)
                raise self.fail(self.instance_name_loc(decl), f"{decl.name}: type {t.name} has no matching constructor")
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
