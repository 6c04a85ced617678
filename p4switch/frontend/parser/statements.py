"""Statements: blocks, `if`, `switch`, `for` (both forms), `return`, `exit`, `break`/`continue`, assignments,
calls, and the local declarations that may stand where a statement does.

P4's grammar needs to know which identifiers are type names (`T x;` versus `a = b;`), which `starts_declaration`
decides from the type names declared so far.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4switch.exceptions import SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.parser.typerefs import TypeParser


class StatementParser(TypeParser):
    """Statements and local variable declarations."""

    if TYPE_CHECKING:
        # Declarations and statements nest in each other (a `const` or an instance inside a body, a body inside an
        # action); these come from `DeclarationParser`, built on this layer, and are declared for the type checker.
        def constant_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.ConstantDeclaration: ...

        def instantiation_rest(
            self, annotations: tuple[ast.Annotation, ...], loc: SourceLocation, decl_type: ast.Type
        ) -> ast.Instantiation: ...

    def block(self) -> ast.BlockStatement:
        annotations = self.annotations()
        open_tok = self.expect("{", "to start a block")
        statements: list[ast.Statement] = []
        while not self.accept("}"):
            if self.tok.kind == "eof":
                self.fail("missing '}' at end of file", open_tok)
            statements.append(self.statement())
        return ast.BlockStatement(loc=open_tok.loc, statements=tuple(statements), annotations=annotations)

    def statement(self) -> ast.Statement:
        annotations = self.annotations()
        tok = self.tok
        loc = tok.loc
        if tok.is_punct("{"):
            block = self.block()
            if annotations:
                return ast.BlockStatement(loc=block.loc, statements=block.statements, annotations=annotations)
            return block
        if tok.is_punct(";"):
            self.advance()
            return ast.EmptyStatement(loc=loc)
        if tok.kind == "id":
            text = tok.text
            if text == "if":
                return self.if_statement()
            if text == "switch":
                return self.switch_statement()
            if text == "return":
                self.advance()
                value = None if self.at(";") else self.expression()
                self.expect(";", "after return")
                return ast.ReturnStatement(loc=loc, value=value)
            if text == "exit":
                self.advance()
                self.expect(";", "after exit")
                return ast.ExitStatement(loc=loc)
            if text == "const":
                return self.constant_declaration(annotations)
            if text == "for":
                return self.for_statement(annotations)
            if text in ("break", "continue") and self.peek().is_punct(";"):
                self.advance()
                self.advance()
                return ast.BreakStatement(loc=loc) if text == "break" else ast.ContinueStatement(loc=loc)
            if text == "transition":
                self.fail("'transition' must be the last statement of a parser state")
        decl = self.local_declaration(annotations)
        if decl is not None:
            return decl
        return self.expression_statement()

    def expression_statement(self) -> ast.Statement:
        stmt = self.assignment_or_call("in this statement")
        self.expect(";", "after the assignment" if isinstance(stmt, ast.AssignmentStatement) else "after the call")
        return stmt

    def assignment_or_call(self, where: str) -> ast.AssignmentStatement | ast.MethodCallStatement:
        """`target = value` or a call, without the `;` (statements and `for` headers end them differently)."""
        loc = self.tok.loc
        target = self.expression()
        if self.accept("="):
            return ast.AssignmentStatement(loc=loc, left=target, right=self.expression())
        compound = self.compound_assignment()
        if compound is not None:
            return self.compound_rest(loc, target, *compound)
        if isinstance(target, ast.Call):
            return ast.MethodCallStatement(loc=loc, call=target)
        self.fail(f"expected '=' or a call {where}, found {self.describe(self.tok)}")

    def compound_rest(self, loc: SourceLocation, target: ast.Expression, op: str, width: int) -> ast.AssignmentStatement:
        """`target op= value` is `target = target op value`. The target node is shared, so it is typed once, and P4
        evaluates it once: a call in a stack index runs once because the code generator evaluates an l-value's
        run-time indexes into temporaries before the right-hand side (`BlockGen.pin_indexes`), and the right-hand
        side's copy of the target is the same node."""
        op_tok = self.tok
        for _ in range(width):
            self.advance()
        value = self.expression()
        return ast.AssignmentStatement(
            loc=loc, left=target, right=ast.BinaryOp(loc=op_tok.loc, op=op, left=target, right=value)
        )

    def for_statement(self, annotations: tuple[ast.Annotation, ...]) -> ast.Statement:
        kw = self.advance()
        self.expect("(", "after 'for'")
        for_in = self.speculate(self.for_in_header)
        if for_in is not None:
            var_type, name, collection = for_in
            body = self.statement()
            return ast.ForInStatement(
                loc=kw.loc, name=name, collection=collection, body=body, var_type=var_type, annotations=annotations
            )
        init = self.for_clauses(";")
        self.expect(";", "after the for initialization")
        cond = None if self.at(";") else self.expression()
        self.expect(";", "after the for condition")
        updates = self.for_clauses(")")
        self.expect(")", "to close the for header")
        body = self.statement()
        return ast.ForStatement(
            loc=kw.loc, body=body, init=init, cond=cond, updates=updates, annotations=annotations
        )

    def for_in_header(self) -> tuple[ast.Type | None, str, ast.Expression]:
        var_type = None
        if not (self.is_name_token(self.tok) and self.peek().is_id("in")):
            var_type = self.type_ref()
        name, _ = self.name("a loop variable")
        self.expect("in")
        collection = self.simple_keyset()
        self.expect(")", "to close the for header")
        return var_type, name, collection

    def for_clauses(self, end: str) -> tuple[ast.Statement, ...]:
        """Comma-separated declarations, assignments or calls (no trailing ';') of a for header."""
        return tuple(self.comma_list(self.for_clause, until=end))

    def for_clause(self) -> ast.Statement:
        if self.starts_declaration():
            loc = self.tok.loc
            return self.variable_rest(loc, self.type_ref(), ())
        return self.assignment_or_call("in the for header")

    def if_statement(self) -> ast.IfStatement:
        kw = self.advance()
        self.expect("(", "after 'if'")
        cond = self.expression()
        self.expect(")", "to close the if condition")
        then = self.statement()
        else_ = self.statement() if self.accept("else") else None
        return ast.IfStatement(loc=kw.loc, cond=cond, then=then, else_=else_)

    def switch_statement(self) -> ast.SwitchStatement:
        kw = self.advance()
        self.expect("(", "after 'switch'")
        expr = self.expression()
        self.expect(")", "to close the switch expression")
        self.expect("{", "to start the switch cases")
        cases: list[ast.SwitchCase] = []
        while not self.accept("}"):
            c_loc = self.tok.loc
            label: ast.Expression
            if self.at("default"):
                self.advance()
                label = ast.DefaultExpression(loc=c_loc)
            else:
                label = self.expression()
            self.expect(":", "after the switch label")
            body = self.block() if self.at("{") or self.at("@") else None
            cases.append(ast.SwitchCase(loc=c_loc, label=label, body=body))
        return ast.SwitchStatement(loc=kw.loc, expr=expr, cases=tuple(cases))

    # ============================================================================================== local declarations

    def local_declaration(
        self, annotations: tuple[ast.Annotation, ...], *, only_declarations: bool = False
    ) -> ast.Declaration | None:
        """A variable declaration or instantiation if one starts here, else None (nothing consumed).

        Where only declarations may appear (control and parser locals), any name starts one, so an undeclared
        type is reported by name resolution rather than as a syntax error."""
        if not self.starts_declaration() and not (only_declarations and self.starts_type()):
            return None
        loc = self.tok.loc
        vtype = self.type_ref()
        if self.at("("):
            return self.instantiation_rest(annotations, loc, vtype)
        decl = self.variable_rest(loc, vtype, annotations)
        self.expect(";", f"after the declaration of {decl.name}")
        return decl

    def variable_rest(
        self, loc: SourceLocation, vtype: ast.Type, annotations: tuple[ast.Annotation, ...]
    ) -> ast.VariableDeclaration:
        """After the type: `name [= init]`, without the `;` (a `for` header has none)."""
        name, _ = self.name("a variable name")
        init = self.expression() if self.accept("=") else None
        return ast.VariableDeclaration(loc=loc, name=name, annotations=annotations, type=vtype, init=init)

    def starts_declaration(self) -> bool:
        """Does a variable declaration or instantiation (rather than an expression statement) start here?"""
        tok = self.tok
        if tok.kind != "id":
            if tok.is_punct(".") and self.peek().kind == "id":
                return self.is_type_name(self.peek().text) and not self.peek(2).is_punct(".")
            return False
        text = tok.text
        if text in ("bit", "int", "varbit", "bool", "string", "tuple", "list", "match_kind"):
            return True
        if text == "error":
            return self.is_name_token(self.peek())
        if not self.is_name_token(tok):
            return False
        nxt = self.peek()
        if self.is_name_token(nxt):
            return True  # `T x` can only be a declaration
        if not self.is_type_name(text):
            return False
        return nxt.is_punct("<") or nxt.is_punct("(") or nxt.is_punct("[")

