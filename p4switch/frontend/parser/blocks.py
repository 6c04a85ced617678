"""Parser and control declarations (and their type-only forms `parser P(...);` / `control C(...);`): parser
locals, value sets, states and transitions; control locals and the `apply` block."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from p4switch.exceptions import SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.parser.tables import TableParser


class BlockHead(TypedDict):
    """What a parser or control declaration has read by its `{`: the fields its node shares with the others."""

    loc: SourceLocation
    name: str
    annotations: tuple[ast.Annotation, ...]
    params: tuple[ast.Parameter, ...]
    type_params: tuple[str, ...]
    constructor_params: tuple[ast.Parameter, ...]


class BlockParser(TableParser):
    """Parsers and controls."""

    def block_declaration(
        self,
        annotations: tuple[ast.Annotation, ...],
        type_only: type[ast.ParserType | ast.ControlType],
        body: Callable[[BlockHead], ast.Declaration],
    ) -> ast.Declaration:
        """`parser|control Name<T>(params);` (a type) or `... (params)(ctor params) { body }`, where `body` reads
        the rest after `{` with the type parameters still in scope."""
        kw = self.advance()
        name, type_params = self.type_declaration_head(f"a {kw.text} name")
        with self.type_scope(type_params):
            params = self.parameters()
            if self.accept(";"):
                return type_only(loc=kw.loc, name=name, annotations=annotations, params=params, type_params=type_params)
            ctor_params = self.parameters() if self.at("(") else ()
            self.expect("{", f"to start {kw.text} {name}")
            head = BlockHead(loc=kw.loc, name=name, annotations=annotations, params=params, type_params=type_params,
                             constructor_params=ctor_params)
            return body(head)

    # ============================================================================================== parsers

    def parser_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        return self.block_declaration(annotations, ast.ParserType, self.parser_body)

    def parser_body(self, head: BlockHead) -> ast.ParserDeclaration:
        locals_: list[ast.Declaration] = []
        states: list[ast.ParserState] = []
        while not self.accept("}"):
            ann = self.annotations()
            if self.at("state"):
                states.append(self.parser_state(ann))
            elif states:
                self.fail(f"expected 'state' or '}}', found {self.describe(self.tok)}")
            else:
                locals_.append(self.parser_local(ann))
        return ast.ParserDeclaration(**head, locals=tuple(locals_), states=tuple(states))

    def parser_local(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        if self.at("const"):
            return self.constant_declaration(annotations)
        if self.at("value_set"):
            kw = self.advance()
            self.expect("<", "after 'value_set'")
            elem = self.type_ref()
            self.expect(">", "to close value_set<...>")
            self.expect("(", "before the value_set size")
            size = self.expression()
            self.expect(")", "after the value_set size")
            name, _ = self.name("a value_set name")
            self.expect(";", f"after value_set {name}")
            return ast.ValueSetDeclaration(loc=kw.loc, name=name, annotations=annotations, element_type=elem, size=size)
        decl = self.local_declaration(annotations, only_declarations=True)
        if decl is None:
            self.fail(f"expected a parser local declaration or 'state', found {self.describe(self.tok)}")
        return decl

    def parser_state(self, annotations: tuple[ast.Annotation, ...]) -> ast.ParserState:
        kw = self.advance()
        name, _ = self.name("a state name")
        self.expect("{", f"to start state {name}")
        statements: list[ast.Statement] = []
        transition: ast.TransitionStatement | None = None
        while not self.accept("}"):
            if self.at("transition"):
                transition = self.transition_statement()
                if not self.at("}"):
                    self.fail(f"expected '}}' after the transition of state {name}, found {self.describe(self.tok)}")
                continue
            statements.append(self.statement())
        return ast.ParserState(
            loc=kw.loc, name=name, annotations=annotations, statements=tuple(statements), transition=transition
        )

    def transition_statement(self) -> ast.TransitionStatement:
        kw = self.advance()
        target: ast.Expression
        if self.at("select"):
            target = self.select_expression()
            self.accept(";")
        else:
            is_global = bool(self.accept("."))
            name, loc = self.name("a state name or 'select'")
            target = ast.Name(loc=loc, name=name, is_global=is_global)
            self.expect(";", "after the transition")
        return ast.TransitionStatement(loc=kw.loc, target=target)

    # ============================================================================================== controls

    def control_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        return self.block_declaration(annotations, ast.ControlType, self.control_body)

    def control_body(self, head: BlockHead) -> ast.ControlDeclaration:
        locals_: list[ast.Declaration] = []
        while not self.at("apply"):
            if self.tok.kind == "eof" or self.at("}"):
                self.fail(f"control {head['name']} has no apply block", self.tok)
            locals_.append(self.control_local())
        self.advance()
        body = self.block()
        self.expect("}", f"after the apply block of control {head['name']}")
        return ast.ControlDeclaration(**head, body=body, locals=tuple(locals_))

    def control_local(self) -> ast.Declaration:
        annotations = self.annotations()
        if self.at("const"):
            return self.constant_declaration(annotations)
        if self.at("action"):
            return self.action_declaration(annotations)
        if self.at("table"):
            return self.table_declaration(annotations)
        decl = self.local_declaration(annotations, only_declarations=True)
        if decl is None:
            self.fail(
                "expected a control local declaration (action, table, constant, variable or instance) or 'apply', "
                f"found {self.describe(self.tok)}"
            )
        return decl
