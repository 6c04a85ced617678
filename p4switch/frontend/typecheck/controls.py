"""Control declarations and their tables: keys and match kinds, the actions list, the default action, const
entries (keysets, actions, priorities) and `size`."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.entrypriorities import PriorityError, entry_priorities
from p4switch.frontend.scope import Scope
from p4switch.frontend.typecheck.parsers import ParserChecker
from p4switch.frontend.typecheck.results import Abort
from p4switch.frontend.types import BitsT, BoolT, EnumT, ErrorT, VoidT, underlying


class ControlChecker(ParserChecker):
    """Controls, tables and action references."""

    def control_decl(self, scope: Scope, decl: ast.ControlDeclaration) -> None:
        inner = self.block_scope(scope, decl)
        for local in decl.locals:
            try:
                self.local_decl(inner, local)
            except Abort:
                pass
        self._return_type.append(None)
        try:
            self.block(inner.child(), decl.body)
        finally:
            self._return_type.pop()

    def table_decl(self, scope: Scope, decl: ast.TableDeclaration) -> None:
        action_names: list[str] = []
        props = {p.name: p for p in decl.properties}
        for prop in decl.properties:
            if isinstance(prop, ast.KeyProperty):
                for ke in prop.elements:
                    try:
                        kt = self.expr(scope, ke.expr)
                    except Abort:
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
                except Abort:
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
                except Abort:
                    pass
                action = self.action_ref(scope, entry.action, bind_all=True)
                if action is not None and action.name not in action_names:
                    self.error(entry.action.loc, f"{decl.name}: action {action.name} is not in the actions list")
                if entry.priority is not None:
                    try:
                        self.const_int(scope, entry.priority, None)
                    except Abort:
                        pass
            try:  # p4c's priority rules (first entry, delta, property types); the compiler computes them again
                entry_priorities(decl, entries, self.out.consts.get)
            except PriorityError as exc:
                self.error(exc.node.loc, f"{decl.name}: {exc}")
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
            except Abort:
                pass
        return found
