"""Parser declarations: states (`accept`/`reject` reserved, `start` required), transitions, and the keysets of
`select` cases (also used by table entries), including value sets."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.scope import Scope, Var
from p4switch.frontend.typecheck.declarations import DeclarationChecker
from p4switch.frontend.typecheck.results import Abort
from p4switch.frontend.types import DontCareT, ExternT, P4Type


class ParserChecker(DeclarationChecker):
    """Parsers, transitions and keysets."""

    def parser_decl(self, scope: Scope, decl: ast.ParserDeclaration) -> None:
        inner = self.block_scope(scope, decl)
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
            except Abort:
                return
            for case in target.cases:
                try:
                    self.keyset(scope, case.keyset, key_types, target.keys)
                except Abort:
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
            if self.value_set_ref(scope, ks):
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
        if self.value_set_ref(scope, el):
            return
        self.expr(scope, el, kt)
        self.convert(el, kt, "keyset")

    def value_set_ref(self, scope: Scope, e: ast.Expression) -> bool:
        """Is `e` the name of a value set (a keyset by itself)? If so it is recorded as one."""
        if isinstance(e, ast.Name):
            found = scope.lookup_value(e.name)
            if isinstance(found, Var) and isinstance(found.type, ExternT) and found.type.name == "value_set":
                self.out.refs[e] = found
                self.out.types[e] = found.type
                return True
        return False
