"""Table declarations: `key`, `actions`, `default_action` and `entries` properties, which have their own syntax,
and every other property (`size`, `implementation`, `counters`, custom ones) as `name = expression;`."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.parser.declarations import DeclarationParser


class TableParser(DeclarationParser):
    """Tables, action references and const entries."""

    def table_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.TableDeclaration:
        kw = self.advance()
        name, _ = self.name("a table name")
        if self.at("(") and self.peek().is_punct(")"):  # `table t() {`: an empty list p4c's grammar still accepts
            self.advance()
            self.advance()
        self.expect("{", f"to start table {name}")
        props: list[ast.TableProperty] = []
        while not self.accept("}"):
            props.append(self.table_property())
        return ast.TableDeclaration(loc=kw.loc, name=name, annotations=annotations, properties=tuple(props))

    def table_property(self) -> ast.TableProperty:
        annotations = self.annotations()
        loc = self.tok.loc
        const = bool(self.accept("const"))
        prop = self.identifier("a table property").text
        self.expect("=", f"after table property '{prop}'")
        if prop == "key":
            self.expect("{", "to start the key")
            elements: list[ast.KeyElement] = []
            while not self.accept("}"):
                elements.append(self.key_element())
            return ast.KeyProperty(loc=loc, name=prop, const=const, annotations=annotations, elements=tuple(elements))
        if prop == "actions":
            self.expect("{", "to start the actions list")
            refs: list[ast.ActionRef] = []
            while not self.accept("}"):
                a_ann = self.annotations()
                refs.append(self.action_ref(a_ann))
                self.expect(";", "after the action in the actions list")
            return ast.ActionsProperty(loc=loc, name=prop, const=const, annotations=annotations, actions=tuple(refs))
        if prop == "default_action":
            ref = self.action_ref(())
            self.expect(";", "after default_action")
            return ast.DefaultActionProperty(loc=loc, name=prop, const=const, annotations=annotations, action=ref)
        if prop == "entries":
            self.expect("{", "to start the entries")
            entries: list[ast.TableEntry] = []
            while not self.accept("}"):
                entries.append(self.table_entry())
            return ast.EntriesProperty(
                loc=loc, name=prop, const=const, annotations=annotations, entries=tuple(entries)
            )
        value = self.expression()
        self.expect(";", f"after table property '{prop}'")
        return ast.TableProperty(loc=loc, name=prop, value=value, const=const, annotations=annotations)

    def key_element(self) -> ast.KeyElement:
        """`expression : match_kind [annotations];`"""
        e_loc = self.tok.loc
        expr = self.expression()
        self.expect(":", "between the key expression and its match kind")
        mk = self.identifier("a match kind")
        e_ann = self.annotations()
        self.expect(";", "after the key element")
        return ast.KeyElement(loc=e_loc, expr=expr, match_kind=mk.text, match_kind_loc=mk.loc, annotations=e_ann)

    def action_ref(self, annotations: tuple[ast.Annotation, ...]) -> ast.ActionRef:
        loc = self.tok.loc
        is_global = bool(self.accept("."))
        name, n_loc = self.name("an action name")
        args = self.arguments() if self.at("(") else None
        return ast.ActionRef(
            loc=loc, name=ast.Name(loc=n_loc, name=name, is_global=is_global), args=args, annotations=annotations
        )

    def table_entry(self) -> ast.TableEntry:
        annotations = self.annotations()
        loc = self.tok.loc
        const = bool(self.accept("const"))
        priority = None
        if self.at("priority") and self.peek().is_punct("="):
            self.advance()
            self.advance()
            priority = self.expression()
            self.expect(":", "after the entry priority")
        keyset = self.keyset_expression()
        self.expect(":", "between the entry keyset and its action")
        action = self.action_ref(())
        more = self.annotations()
        self.expect(";", "after the table entry")
        return ast.TableEntry(
            loc=loc, keyset=keyset, action=action, priority=priority, const=const, annotations=annotations + more
        )
