"""Statements: blocks (each a new scope), assignments, calls, `if` and `switch` (including `switch` on a table's
`action_run`), `return` against the enclosing function's type, `exit`, local variable declarations, and P4_16
1.2.5's loops (`for (init; cond; updates)`, `for (T x in lo .. hi)`) with `break`/`continue` inside them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4switch.frontend import ast
from p4switch.frontend.scope import Scope, Var
from p4switch.frontend.typecheck.calls import CallChecker
from p4switch.frontend.typecheck.helpers import table_action_names
from p4switch.frontend.typecheck.results import Abort
from p4switch.frontend.types import ActionEnumT, BitsT, BoolT, DontCareT, InfIntT, VoidT, underlying


class StatementChecker(CallChecker):
    """Statements and the scopes they open."""

    if TYPE_CHECKING:
        # Constants and instances may be declared where statements stand; these come from `DeclarationChecker`,
        # built on this layer, and are declared here for the type checker only.
        def const_decl(self, scope: Scope, decl: ast.ConstantDeclaration) -> None: ...

        def instantiation(self, scope: Scope, decl: ast.Instantiation) -> None: ...

    def block(self, scope: Scope, block: ast.BlockStatement) -> None:
        for st in block.statements:
            try:
                self.stmt(scope, st)
            except Abort:
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
        elif isinstance(st, ast.ForStatement):
            self.for_stmt(scope.child(), st)
        elif isinstance(st, ast.ForInStatement):
            self.for_in_stmt(scope.child(), st)
        elif isinstance(st, (ast.BreakStatement, ast.ContinueStatement)):
            if not self._loops:
                word = "break" if isinstance(st, ast.BreakStatement) else "continue"
                raise self.fail(st.loc, f"{word} statement must be used in a loop")
        else:
            raise self.fail(st.loc, f"unsupported statement {type(st).__name__}")

    def for_stmt(self, scope: Scope, st: ast.ForStatement) -> None:
        """The initializers' declarations live in the loop's own scope (P4_16 1.2.5, 12.9)."""
        for init in st.init:
            self.stmt(scope, init)
        if st.cond is not None:
            ct = self.expr(scope, st.cond, BoolT())
            if not isinstance(ct, BoolT):
                self.error(st.cond.loc, f"Condition of a for statement must be of type bool, not {ct}")
        for update in st.updates:
            self.stmt(scope, update)
        self.loop_body(scope, st.body)

    def for_in_stmt(self, scope: Scope, st: ast.ForInStatement) -> None:
        """`for ([T] x in lo .. hi)`: an inclusive range of integers; `x` takes T, else the bounds' type."""
        rng = st.collection
        if not (isinstance(rng, ast.BinaryOp) and rng.op == ".."):
            raise self.fail(rng.loc, "for-in over anything but a range lo .. hi is not supported")
        declared = self.resolve_type(scope, st.var_type) if st.var_type is not None else None
        lt = self.expr(scope, rng.left, declared)
        rt = self.expr(scope, rng.right, declared if declared is not None else lt)
        t = declared or (rt if isinstance(lt, InfIntT) else lt)
        if not isinstance(underlying(t), (BitsT, InfIntT)):
            raise self.fail(rng.loc, f"for-in range bounds must be integers, not {t}")
        if isinstance(t, InfIntT):
            raise self.fail(rng.loc, "for-in range needs a typed bound or loop variable (both bounds are int)")
        self.convert(rng.left, t, "range bound")
        self.convert(rng.right, t, "range bound")
        self.out.types[rng] = t
        var = Var(st.name, t, "local", node=st, owner=scope.owner)
        scope.values[st.name] = var
        self.out.decl_vars[st] = var
        self.loop_body(scope, st.body)

    def loop_body(self, scope: Scope, body: ast.Statement) -> None:
        self._loops += 1
        try:
            self.stmt(scope.child(), body)
        finally:
            self._loops -= 1

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
                    table_actions = table_action_names(t.decl)
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
                except Abort:
                    pass
            if case.body is not None:
                self.stmt(scope, case.body)
