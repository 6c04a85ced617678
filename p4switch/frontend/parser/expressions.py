"""Expressions: precedence climbing over P4's binary operators, unary operators and casts, primaries, postfix
member/index/slice/call chains (with `f<T>(...)` type arguments), argument lists, and the keysets and `select`
expressions of parser transitions and table entries.

A `<` after a name or member is taken as a type-argument list only when it parses as one and is followed by `(`
(`pkt.lookahead<bit<8>>()`), otherwise it is less-than. `>` is always its own token: two adjacent ones form `>>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4switch.frontend import ast
from p4switch.frontend.lexer import decode_string, parse_int
from p4switch.frontend.parser.base import BASE_TYPE_KEYWORDS, ParserBase

# Binary operators from loosest to tightest (P4 binds & ^ | tighter than comparisons, unlike C).
BINARY_LEVELS: tuple[frozenset[str], ...] = (
    frozenset({"||"}),
    frozenset({"&&"}),
    frozenset({"==", "!="}),
    frozenset({"<", ">", "<=", ">="}),
    frozenset({"|"}),
    frozenset({"^"}),
    frozenset({"&"}),
    frozenset({"<<", ">>"}),
    frozenset({"++", "+", "-", "|+|", "|-|"}),
    frozenset({"*", "/", "%"}),
)
BINARY_PRECEDENCE = {op: level for level, ops in enumerate(BINARY_LEVELS) for op in ops}
# `op=` for these: P4_16 1.2.5's compound assignments (`>>=` is handled apart, see `compound_assignment`).
COMPOUND_OPERATORS = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", "|+|", "|-|"})


class ExpressionParser(ParserBase):
    """Expressions, arguments, keysets and `select`."""

    if TYPE_CHECKING:
        # Types and expressions nest in each other (`bit<(W)>`, `(bit<8>) x`); these come from the layers built on
        # this one (`AnnotationParser`, `TypeParser`) and are declared here for the type checker only.
        def annotations(self) -> tuple[ast.Annotation, ...]: ...

        def type_ref(self, *, allow_dont_care: bool = False) -> ast.Type: ...

    def expression(self) -> ast.Expression:
        cond = self.binary(0)
        if self.at("?"):
            q = self.advance()
            then = self.expression()
            self.expect(":", "in the conditional expression")
            else_ = self.expression()
            return ast.Ternary(loc=q.loc, cond=cond, then=then, else_=else_)
        return cond

    def binary_operator(self) -> tuple[str, int] | None:
        """The binary operator at the cursor and how many tokens it spans (`>>` is two `>` tokens)."""
        tok = self.tok
        if tok.kind != "punct" or self.compound_assignment() is not None:
            return None
        if tok.text == ">":
            nxt = self.peek()
            if nxt.is_punct(">") and not nxt.space and nxt.loc.line == tok.loc.line:
                return ">>", 2
            return ">", 1
        if tok.text in BINARY_PRECEDENCE:
            return tok.text, 1
        return None

    def compound_assignment(self) -> tuple[str, int] | None:
        """A compound assignment operator at the cursor (`+=`, `<<=`, `|+|=`, ...): the binary operator and how many
        tokens it spans. The lexer has no such tokens: `+=` is `+` then `=` with no space between, and `>>=` is
        `>` then `>=`."""
        tok = self.tok
        if tok.kind != "punct":
            return None
        nxt = self.peek()
        if nxt.space or nxt.loc.line != tok.loc.line:
            return None
        if tok.text == ">" and nxt.is_punct(">="):
            return ">>", 2
        if tok.text in COMPOUND_OPERATORS and nxt.is_punct("="):
            return tok.text, 2
        return None

    def binary(self, min_level: int) -> ast.Expression:
        """Precedence climbing: operators of level >= min_level, all left-associative."""
        left = self.unary()
        while True:
            found = self.binary_operator()
            if found is None:
                return left
            op, width = found
            level = BINARY_PRECEDENCE[op]
            if level < min_level:
                return left
            op_tok = self.tok
            for _ in range(width):
                self.advance()
            right = self.binary(level + 1)
            left = ast.BinaryOp(loc=op_tok.loc, op=op, left=left, right=right)

    def unary(self) -> ast.Expression:
        tok = self.tok
        if tok.kind == "punct" and tok.text in ("!", "~", "-", "+"):
            self.advance()
            operand = self.unary()
            return ast.UnaryOp(loc=tok.loc, op=tok.text, operand=operand)
        if tok.is_punct("(") and self.starts_cast():
            self.advance()
            ctype = self.type_ref()
            self.expect(")", "to close the cast")
            operand = self.unary()
            return ast.Cast(loc=tok.loc, type=ctype, expr=operand)
        return self.postfix(self.primary())

    def starts_cast(self) -> bool:
        """After '(': is this `(type) expr`?"""
        tok = self.peek()
        if tok.kind != "id":
            return False
        text = tok.text
        if text in ("bit", "int", "varbit", "bool", "string", "tuple"):
            return True
        if text == "error":
            return self.peek(2).is_punct(")")
        if not self.is_type_name(text):
            return False
        nxt = self.peek(2)
        return nxt.is_punct(")") or nxt.is_punct("<")

    def primary(self) -> ast.Expression:
        tok = self.tok
        loc = tok.loc
        if tok.kind == "int":
            self.advance()
            try:
                value, width, signed, base = parse_int(tok.text)
            except ValueError:
                self.fail(f"invalid integer literal '{tok.text}'", tok)
            if width is not None and width == 0 and value != 0:
                self.fail(f"integer literal '{tok.text}' has width 0", tok)
            return ast.IntLiteral(loc=loc, value=value, width=width, signed=signed, base=base, text=tok.text)
        if tok.kind == "string":
            self.advance()
            return ast.StringLiteral(loc=loc, value=decode_string(tok.text))
        if tok.kind == "punct":
            if tok.text == ".":
                self.advance()
                name, _ = self.name("a name after '.'")
                return ast.Name(loc=loc, name=name, is_global=True)
            if tok.text == "(":
                self.advance()
                expr = self.expression()
                self.expect(")", "to close the parenthesized expression")
                return expr
            if tok.text == "{":
                return self.brace_expression()
            self.fail(f"expected an expression, found {self.describe(tok)}")
        if tok.kind == "id":
            text = tok.text
            if text in ("true", "false"):
                self.advance()
                return ast.BoolLiteral(loc=loc, value=text == "true")
            if text == "_":
                self.advance()
                return ast.DontCare(loc=loc)
            if text == "default":
                self.advance()
                return ast.DefaultExpression(loc=loc)
            if text == "select":
                return self.select_expression()
            if text in ("error", "this") or self.is_name_token(tok):
                self.advance()
                return ast.Name(loc=loc, name=text)
            if text in ("bit", "int", "varbit", "bool"):
                # a type used as a value, e.g. `bit<8>.minSizeInBits()` is not P4; report clearly.
                self.fail(f"type '{text}' cannot be used as a value here (missing parentheses for a cast?)")
        self.fail(f"expected an expression, found {self.describe(tok)}")

    def brace_expression(self) -> ast.Expression:
        open_tok = self.advance()
        if self.at("#"):
            self.advance()
            self.expect("}", "after '{#'")
            return ast.InvalidHeader(loc=open_tok.loc)
        if self.accept("}"):
            return ast.ListExpression(loc=open_tok.loc, items=())
        if self.tok.kind == "id" and self.peek().is_punct("="):
            fields = self.comma_list(self.field_initializer, until="}")
            self.expect("}", "to close the structure initializer")
            return ast.StructExpression(loc=open_tok.loc, fields=tuple(fields))
        items = self.comma_list(self.expression, until="}")
        self.expect("}", "to close the list expression")
        return ast.ListExpression(loc=open_tok.loc, items=tuple(items))

    def field_initializer(self) -> ast.NamedExpression:
        """`name = expression` inside a structure initializer `{a = 1, b = 2}`."""
        key = self.tok
        if key.kind != "id":
            self.fail(f"expected a field name, found {self.describe(key)}")
        self.advance()
        self.expect("=", "in the structure initializer")
        return ast.NamedExpression(loc=key.loc, name=key.text, value=self.expression())

    def postfix(self, expr: ast.Expression) -> ast.Expression:
        while True:
            tok = self.tok
            if tok.is_punct("."):
                self.advance()
                expr = ast.Member(loc=expr.loc, expr=expr, member=self.member_name())
            elif tok.is_punct("["):
                self.advance()
                index = self.expression()
                if self.accept(":"):
                    lo = self.expression()
                    self.expect("]", "to close the bit slice")
                    expr = ast.Slice(loc=expr.loc, expr=expr, hi=index, lo=lo)
                else:
                    self.expect("]", "to close the index")
                    expr = ast.Index(loc=expr.loc, expr=expr, index=index)
            elif tok.is_punct("("):
                args = self.arguments()
                expr = ast.Call(loc=expr.loc, target=expr, args=args)
            elif tok.is_punct("<") and isinstance(expr, ast.Name | ast.Member):
                type_args = self.speculate(self.generic_call_type_args)
                if type_args is None:
                    return expr
                args = self.arguments()
                expr = ast.Call(loc=expr.loc, target=expr, type_args=type_args, args=args)
            else:
                return expr

    def generic_call_type_args(self) -> tuple[ast.Type, ...]:
        self.advance()  # '<'
        args = self.comma_list(self.call_type_argument)
        self.expect(">")
        if not self.at("("):
            self.fail("type arguments not followed by a call")
        return tuple(args)

    def call_type_argument(self) -> ast.Type:
        """One type argument of `f<...>(`; anything that does not look like a type makes `<` a comparison."""
        if not self.looks_like_type():
            self.fail("not a type argument")
        return self.type_ref(allow_dont_care=True)

    def looks_like_type(self) -> bool:
        tok = self.tok
        if tok.kind != "id":
            return tok.is_punct(".") and self.is_type_name(self.peek().text)
        return tok.text in BASE_TYPE_KEYWORDS or tok.text == "_" or self.is_type_name(tok.text)

    def arguments(self) -> tuple[ast.Argument, ...]:
        return tuple(self.parenthesized_list(self.argument, "argument list"))

    def argument(self) -> ast.Argument:
        """A positional argument or `name = value` (not `name == value`)."""
        loc = self.tok.loc
        name = None
        if self.tok.kind == "id" and self.peek().is_punct("=") and not self.peek(2).is_punct("="):
            name = self.advance().text
            self.advance()
        return ast.Argument(loc=loc, value=self.expression(), name=name)

    # ============================================================================================== select, keysets

    def select_expression(self) -> ast.SelectExpression:
        kw = self.advance()
        self.expect("(", "after 'select'")
        keys = self.comma_list(self.expression)
        self.expect(")", "to close the select keys")
        self.expect("{", "to start the select cases")
        cases: list[ast.SelectCase] = []
        while not self.accept("}"):
            ann = self.annotations()
            c_loc = self.tok.loc
            keyset = self.keyset_expression()
            self.expect(":", "after the select keyset")
            is_global = bool(self.accept("."))
            state, s_loc = self.name("a state name")
            self.expect(";", "after the select case")
            cases.append(
                ast.SelectCase(
                    loc=c_loc, keyset=keyset, state=ast.Name(loc=s_loc, name=state, is_global=is_global), annotations=ann
                )
            )
        return ast.SelectExpression(loc=kw.loc, keys=tuple(keys), cases=tuple(cases))

    def keyset_expression(self) -> ast.Expression:
        """A keyset: `default`, `_`, `v &&& m`, `lo .. hi`, an expression, or a tuple `(k1, k2)` of those."""
        if self.at("("):
            tup = self.speculate(self.tuple_keyset)
            if tup is not None:
                return tup
        return self.simple_keyset()

    def tuple_keyset(self) -> ast.Expression:
        open_tok = self.advance()
        elements = self.comma_list(self.simple_keyset)
        self.expect(")")
        if not self.at(":"):
            self.fail("not a tuple keyset")
        if len(elements) == 1 and not isinstance(
            elements[0], ast.DefaultExpression | ast.DontCare
        ) and not (isinstance(elements[0], ast.BinaryOp) and elements[0].op in ("&&&", "..")):
            return elements[0]
        return ast.TupleKeyset(loc=open_tok.loc, elements=tuple(elements))

    def simple_keyset(self) -> ast.Expression:
        tok = self.tok
        if tok.is_id("default"):
            self.advance()
            return ast.DefaultExpression(loc=tok.loc)
        if tok.is_id("_"):
            self.advance()
            return ast.DontCare(loc=tok.loc)
        left = self.expression()
        op = self.tok
        if op.is_punct("&&&") or op.is_punct(".."):
            self.advance()
            right = self.expression()
            return ast.BinaryOp(loc=op.loc, op=op.text, left=left, right=right)
        return left
