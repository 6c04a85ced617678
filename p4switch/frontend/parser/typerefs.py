"""Type references (`bit<W>`, `int`, `varbit<W>`, `tuple<...>`, named types with type arguments, header stacks
`T[N]`), type parameter lists and parameter lists."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.parser.annotations import AnnotationParser
from p4switch.frontend.parser.base import BASE_TYPE_KEYWORDS

DIRECTIONS = frozenset({"in", "out", "inout"})
SIZED_TYPES: dict[str, type[ast.BitType | ast.IntType | ast.VarbitType]] = {
    "bit": ast.BitType,
    "int": ast.IntType,
    "varbit": ast.VarbitType,
}
KEYWORD_TYPES: dict[str, type[ast.BoolType | ast.ErrorType | ast.StringType | ast.VoidType | ast.MatchKindType]] = {
    "bool": ast.BoolType,
    "error": ast.ErrorType,
    "string": ast.StringType,
    "void": ast.VoidType,
    "match_kind": ast.MatchKindType,
}


class TypeParser(AnnotationParser):
    """Types and the parameter lists of every declaration that takes parameters."""

    def starts_type(self) -> bool:
        """Could the current token begin a type reference (for declarations at top level)?"""
        tok = self.tok
        if tok.kind != "id":
            return tok.is_punct(".") and self.peek().kind == "id"
        return tok.text in BASE_TYPE_KEYWORDS or self.is_name_token(tok) or tok.text == "_"

    def type_ref(self, *, allow_dont_care: bool = False) -> ast.Type:
        tok = self.tok
        loc = tok.loc
        text = tok.text if tok.kind == "id" else ""
        base: ast.Type
        if text in ("bit", "int", "varbit"):
            self.advance()
            if self.at("<"):
                self.advance()
                width = self.width_expression()
                self.expect(">", f"to close {text}<...>")
            elif text == "bit":
                width = ast.IntLiteral(loc=loc, value=1, text="1")
            elif text == "int":
                base = ast.InfIntType(loc=loc)
                return self.stack_suffix(base)
            else:
                self.fail("varbit needs a maximum width: varbit<W>")
            base = SIZED_TYPES[text](loc=loc, width=width)
        elif text in KEYWORD_TYPES:
            self.advance()
            base = KEYWORD_TYPES[text](loc=loc)
        elif text in ("tuple", "list"):
            self.advance()
            self.expect("<", f"after '{text}'")
            elements = self.comma_list(self.type_ref)
            self.expect(">", f"to close {text}<...>")
            base = ast.TupleType(loc=loc, elements=tuple(elements))
        elif text == "_":
            if not allow_dont_care:
                self.fail("'_' is not allowed as a type here")
            self.advance()
            return ast.DontCareType(loc=loc)
        else:
            is_global = bool(self.accept("."))
            name, loc2 = self.name("a type")
            if is_global:
                loc2 = loc
            type_args: tuple[ast.Type, ...] = ()
            if self.at("<"):
                self.advance()
                type_args = self.type_arguments()
            base = ast.NamedType(loc=loc2, name=name, type_args=type_args, is_global=is_global)
        return self.stack_suffix(base)

    def stack_suffix(self, base: ast.Type) -> ast.Type:
        while self.at("[") and not self.peek().is_punct("]"):
            self.advance()
            size = self.expression()
            self.expect("]", "to close the header stack size")
            base = ast.StackType(loc=base.loc, element=base, size=size)
        return base

    def width_expression(self) -> ast.Expression:
        tok = self.tok
        if tok.kind == "int":
            return self.primary()
        if tok.is_punct("("):
            self.advance()
            expr = self.expression()
            self.expect(")")
            return expr
        if self.is_name_token(tok) or tok.is_punct("."):
            return self.postfix(self.primary())
        self.fail(f"expected a width (integer or parenthesized expression), found {self.describe(tok)}")

    def type_arguments(self) -> tuple[ast.Type, ...]:
        """After '<': `T1, T2 >` (a type argument may be `_`)."""
        args = self.comma_list(lambda: self.type_ref(allow_dont_care=True))
        self.expect(">", "to close the type argument list")
        return tuple(args)

    def type_parameters(self) -> tuple[str, ...]:
        if not self.accept("<"):
            return ()
        names = self.comma_list(lambda: self.name("a type parameter")[0])
        self.expect(">", "to close the type parameter list")
        return tuple(names)

    def parameters(self) -> tuple[ast.Parameter, ...]:
        return tuple(self.parenthesized_list(self.parameter, "parameter list"))

    def parameter(self) -> ast.Parameter:
        annotations = self.annotations()
        loc = self.tok.loc
        direction = None
        if self.tok.kind == "id" and self.tok.text in DIRECTIONS:
            direction = self.advance().text
        ptype = self.type_ref()
        name, _ = self.name("a parameter name")
        default = self.expression() if self.accept("=") else None
        return ast.Parameter(
            loc=loc, name=name, type=ptype, direction=direction, default=default, annotations=annotations
        )
