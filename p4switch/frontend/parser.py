"""A hand-written recursive-descent parser for P4_16 (precedence climbing for expressions) producing `ast` nodes.

P4's grammar needs to know which identifiers are type names (`T x;` versus `a = b;`, `(T) x` versus `(a)`), so the
parser keeps the set of type names declared so far plus a stack of type-parameter scopes. A `<` after a name or
member is taken as a type-argument list only when it parses as one and is followed by `(` (`pkt.lookahead<bit<8>>()`),
otherwise it is less-than. `>` is always its own token: two adjacent ones form `>>` in expressions.

Entry points: `parse_program(path, include_dirs, defines)` and `parse_text(text, filename)`; both raise
`CompileError` with a located diagnostic (source line and caret) on any syntax error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import NoReturn, TypeVar

from p4switch.exceptions import CompileError, SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.lexer import KEYWORDS, Token, decode_string, parse_int
from p4switch.frontend.preprocessor import Preprocessor, diagnostics_for
from p4switch.frontend.source import SourceManager

T = TypeVar("T")

# Keywords that may still be used as ordinary names (p4c's `nonTypeName`), e.g. a field called `type` or `key`.
_SOFT_KEYWORDS = frozenset({"apply", "key", "actions", "state", "entries", "type", "priority", "list"})
_BASE_TYPE_KEYWORDS = frozenset({"bit", "int", "varbit", "bool", "error", "string", "void", "match_kind", "tuple"})
_DIRECTIONS = frozenset({"in", "out", "inout"})

# Binary operators from loosest to tightest (P4 binds & ^ | tighter than comparisons, unlike C).
_BINARY_LEVELS: tuple[frozenset[str], ...] = (
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
_BINARY_PRECEDENCE = {op: level for level, ops in enumerate(_BINARY_LEVELS) for op in ops}


class _Backtrack(Exception):
    """Internal: a speculative parse failed; the caller rewinds."""


class Parser:
    """Parses one preprocessed token stream into an `ast.Program`."""

    def __init__(self, tokens: list[Token], sources: SourceManager | None = None) -> None:
        self.sources = sources or SourceManager()
        if tokens:
            last = tokens[-1]
            eof_loc = SourceLocation(last.loc.file, last.loc.line, last.loc.column + len(last.text))
        else:
            eof_loc = SourceLocation("<empty>", 1, 1)
        self.tokens = [*tokens, Token("eof", "<end of file>", eof_loc)]
        self.pos = 0
        self.type_names: set[str] = set()
        self.type_scopes: list[set[str]] = []
        self.speculating = 0

    # ============================================================================================== token helpers

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind != "eof":
            self.pos += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.tokens[self.pos]
        return tok.kind in ("punct", "id") and tok.text == text

    def accept(self, text: str) -> Token | None:
        if self.at(text):
            return self.advance()
        return None

    def expect(self, text: str, context: str = "") -> Token:
        if self.at(text):
            return self.advance()
        where = f" {context}" if context else ""
        self.fail(f"expected '{text}'{where}, found {self.describe(self.tok)}")

    def describe(self, tok: Token) -> str:
        if tok.kind == "eof":
            return "end of file"
        if tok.kind == "string":
            return f"string {tok.text}"
        return f"'{tok.text}'"

    def fail(self, message: str, tok: Token | None = None) -> NoReturn:
        if self.speculating:
            raise _Backtrack()
        raise CompileError(diagnostics_for(self.sources, tok or self.tok, message))

    def speculate(self, fn: Callable[[], T]) -> T | None:
        """Run `fn`; on a syntax error rewind and return None."""
        saved = self.pos
        self.speculating += 1
        try:
            return fn()
        except _Backtrack:
            self.pos = saved
            return None
        finally:
            self.speculating -= 1

    # ============================================================================================== names/types

    def is_type_name(self, name: str) -> bool:
        return name in self.type_names or any(name in scope for scope in self.type_scopes)

    def declare_type(self, name: str) -> None:
        if self.type_scopes:
            self.type_scopes[-1].add(name)
        else:
            self.type_names.add(name)

    def is_name_token(self, tok: Token) -> bool:
        return tok.kind == "id" and (tok.text not in KEYWORDS or tok.text in _SOFT_KEYWORDS)

    def name(self, what: str = "a name") -> tuple[str, SourceLocation]:
        tok = self.tok
        if not self.is_name_token(tok):
            self.fail(f"expected {what}, found {self.describe(tok)}")
        self.advance()
        return tok.text, tok.loc

    def member_name(self) -> str:
        tok = self.tok
        if tok.kind != "id":
            self.fail(f"expected a member name, found {self.describe(tok)}")
        self.advance()
        return tok.text

    # ============================================================================================== program

    def parse_program(self) -> ast.Program:
        loc = self.tok.loc
        decls: list[ast.Node] = []
        while self.tok.kind != "eof":
            if self.accept(";"):
                continue
            decls.append(self.declaration())
        return ast.Program(loc=loc, declarations=tuple(decls))

    def declaration(self) -> ast.Node:
        annotations = self.annotations()
        tok = self.tok
        text = tok.text if tok.kind == "id" else ""
        if text == "const":
            return self.constant_declaration(annotations)
        if text == "extern":
            return self.extern_declaration(annotations)
        if text == "action":
            return self.action_declaration(annotations)
        if text == "parser":
            return self.parser_declaration(annotations)
        if text == "control":
            return self.control_declaration(annotations)
        if text == "package":
            return self.package_declaration(annotations)
        if text in ("header", "header_union", "struct"):
            return self.struct_like_declaration(annotations)
        if text == "enum":
            return self.enum_declaration(annotations)
        if text in ("typedef", "type"):
            return self.typedef_declaration(annotations)
        if text == "error" and self.peek().is_punct("{"):
            return self.error_declaration(annotations)
        if text == "match_kind":
            return self.match_kind_declaration(annotations)
        if self.starts_type():
            return self.function_or_instantiation(annotations)
        self.fail(f"expected a declaration, found {self.describe(tok)}")

    # ============================================================================================== annotations

    def annotations(self) -> tuple[ast.Annotation, ...]:
        result: list[ast.Annotation] = []
        while self.at("@"):
            result.append(self.annotation())
        return tuple(result)

    def annotation(self) -> ast.Annotation:
        at = self.advance()
        tok = self.tok
        if tok.kind != "id":
            self.fail(f"expected an annotation name after '@', found {self.describe(tok)}")
        self.advance()
        name = tok.text
        if name == "pragma":
            words: list[Token] = []
            while self.tok.kind != "eof" and not self.tok.bol:
                words.append(self.advance())
            texts = tuple(w.text for w in words)
            return ast.Annotation(loc=at.loc, name=name, body=" ".join(texts), tokens=texts)
        if self.at("(") and not self.tok.bol:
            open_tok = self.advance()
            body = self.balanced_tokens(open_tok, "(", ")")
            texts = tuple(t.text for t in body)
            args = self.try_expression_list(body)
            return ast.Annotation(loc=at.loc, name=name, body=" ".join(texts), tokens=texts, args=args)
        if self.at("[") and not self.tok.bol:
            open_tok = self.advance()
            body = self.balanced_tokens(open_tok, "[", "]")
            texts = tuple(t.text for t in body)
            kvs = self.try_kv_list(body)
            args = None if kvs is not None else self.try_expression_list(body)
            if kvs is None and args is None:
                self.fail(f"cannot parse structured annotation @{name}", open_tok)
            return ast.Annotation(
                loc=at.loc, name=name, body=" ".join(texts), tokens=texts, args=args, kvs=kvs, structured=True
            )
        return ast.Annotation(loc=at.loc, name=name)

    def balanced_tokens(self, open_tok: Token, opener: str, closer: str) -> list[Token]:
        depth = 1
        body: list[Token] = []
        while True:
            tok = self.tok
            if tok.kind == "eof":
                self.fail(f"unterminated annotation body: missing '{closer}'", open_tok)
            self.advance()
            if tok.is_punct(opener):
                depth += 1
            elif tok.is_punct(closer):
                depth -= 1
                if depth == 0:
                    return body
            body.append(tok)

    def sub_parser(self, tokens: list[Token]) -> Parser:
        sub = Parser(tokens, self.sources)
        sub.type_names = self.type_names
        sub.type_scopes = self.type_scopes
        sub.speculating = 1
        return sub

    def try_expression_list(self, tokens: list[Token]) -> tuple[ast.Expression, ...] | None:
        if not tokens:
            return ()
        sub = self.sub_parser(tokens)
        try:
            items = [sub.expression()]
            while sub.accept(","):
                items.append(sub.expression())
            if sub.tok.kind != "eof":
                return None
            return tuple(items)
        except (_Backtrack, CompileError):
            return None

    def try_kv_list(self, tokens: list[Token]) -> tuple[ast.NamedExpression, ...] | None:
        if len(tokens) < 2 or tokens[0].kind != "id" or not tokens[1].is_punct("="):
            return None
        sub = self.sub_parser(tokens)
        try:
            pairs: list[ast.NamedExpression] = []
            while True:
                key = sub.advance()
                sub.expect("=")
                pairs.append(ast.NamedExpression(loc=key.loc, name=key.text, value=sub.expression()))
                if not sub.accept(","):
                    break
            if sub.tok.kind != "eof":
                return None
            return tuple(pairs)
        except (_Backtrack, CompileError):
            return None

    # ============================================================================================== types

    def starts_type(self) -> bool:
        """Could the current token begin a type reference (for declarations at top level)?"""
        tok = self.tok
        if tok.kind != "id":
            return tok.is_punct(".") and self.peek().kind == "id"
        return tok.text in _BASE_TYPE_KEYWORDS or self.is_name_token(tok) or tok.text == "_"

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
            if text == "bit":
                base = ast.BitType(loc=loc, width=width)
            elif text == "int":
                base = ast.IntType(loc=loc, width=width)
            else:
                base = ast.VarbitType(loc=loc, width=width)
        elif text == "bool":
            self.advance()
            base = ast.BoolType(loc=loc)
        elif text == "error":
            self.advance()
            base = ast.ErrorType(loc=loc)
        elif text == "string":
            self.advance()
            base = ast.StringType(loc=loc)
        elif text == "void":
            self.advance()
            base = ast.VoidType(loc=loc)
        elif text == "match_kind":
            self.advance()
            base = ast.MatchKindType(loc=loc)
        elif text in ("tuple", "list"):
            self.advance()
            self.expect("<", f"after '{text}'")
            elements = [self.type_ref()]
            while self.accept(","):
                elements.append(self.type_ref())
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
        args = [self.type_ref(allow_dont_care=True)]
        while self.accept(","):
            args.append(self.type_ref(allow_dont_care=True))
        self.expect(">", "to close the type argument list")
        return tuple(args)

    def type_parameters(self) -> tuple[str, ...]:
        if not self.accept("<"):
            return ()
        names = [self.name("a type parameter")[0]]
        while self.accept(","):
            names.append(self.name("a type parameter")[0])
        self.expect(">", "to close the type parameter list")
        return tuple(names)

    # ============================================================================================== parameters

    def parameters(self) -> tuple[ast.Parameter, ...]:
        self.expect("(", "to start the parameter list")
        params: list[ast.Parameter] = []
        if not self.at(")"):
            while True:
                params.append(self.parameter())
                if not self.accept(","):
                    break
        self.expect(")", "to close the parameter list")
        return tuple(params)

    def parameter(self) -> ast.Parameter:
        annotations = self.annotations()
        loc = self.tok.loc
        direction = None
        if self.tok.kind == "id" and self.tok.text in _DIRECTIONS:
            direction = self.advance().text
        ptype = self.type_ref()
        name, _ = self.name("a parameter name")
        default = self.expression() if self.accept("=") else None
        return ast.Parameter(
            loc=loc, name=name, type=ptype, direction=direction, default=default, annotations=annotations
        )

    # ============================================================================================== type decls

    def struct_like_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        name, _ = self.name(f"a {kw.text} name")
        self.declare_type(name)
        type_params = self.type_parameters()
        self.type_scopes.append(set(type_params))
        try:
            self.expect("{", f"to start {kw.text} {name}")
            fields: list[ast.StructField] = []
            while not self.accept("}"):
                f_ann = self.annotations()
                f_loc = self.tok.loc
                f_type = self.type_ref()
                f_name, _ = self.name("a field name")
                self.expect(";", "after the field")
                fields.append(ast.StructField(loc=f_loc, name=f_name, type=f_type, annotations=f_ann))
        finally:
            self.type_scopes.pop()
        cls = {"header": ast.HeaderType, "header_union": ast.HeaderUnionType, "struct": ast.StructType}[kw.text]
        return cls(loc=kw.loc, name=name, annotations=annotations, fields=tuple(fields), type_params=type_params)

    def enum_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.EnumType:
        kw = self.advance()
        underlying = None
        if not (self.is_name_token(self.tok) and self.peek().is_punct("{")):
            underlying = self.type_ref()
        name, _ = self.name("an enum name")
        self.declare_type(name)
        self.expect("{", f"to start enum {name}")
        members: list[ast.EnumMember] = []
        while not self.at("}"):
            m_ann = self.annotations()
            m_name, m_loc = self.name("an enum member")
            value = self.expression() if self.accept("=") else None
            members.append(ast.EnumMember(loc=m_loc, name=m_name, value=value, annotations=m_ann))
            if not self.accept(","):
                break
        self.expect("}", f"to close enum {name}")
        return ast.EnumType(
            loc=kw.loc, name=name, annotations=annotations, members=tuple(members), underlying=underlying
        )

    def typedef_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        target: ast.Type | ast.Declaration
        if self.tok.kind == "id" and self.tok.text in ("header", "header_union", "struct", "enum"):
            target = self.struct_like_declaration(()) if self.tok.text != "enum" else self.enum_declaration(())
        else:
            target = self.type_ref()
        name, _ = self.name("a type name")
        self.declare_type(name)
        self.expect(";", f"after {kw.text} {name}")
        if kw.text == "typedef":
            return ast.TypedefDeclaration(loc=kw.loc, name=name, annotations=annotations, type=target)
        return ast.NewTypeDeclaration(loc=kw.loc, name=name, annotations=annotations, type=target)

    def identifier_list_declaration(self, what: str) -> tuple[SourceLocation, tuple[str, ...], tuple[SourceLocation, ...]]:
        kw = self.advance()
        self.expect("{", f"after '{what}'")
        names: list[str] = []
        locs: list[SourceLocation] = []
        while not self.at("}"):
            tok = self.tok
            if tok.kind != "id":
                self.fail(f"expected a name in the {what} declaration, found {self.describe(tok)}")
            self.advance()
            names.append(tok.text)
            locs.append(tok.loc)
            if not self.accept(","):
                break
        self.expect("}", f"to close the {what} declaration")
        return kw.loc, tuple(names), tuple(locs)

    def error_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.ErrorDeclaration:
        loc, names, locs = self.identifier_list_declaration("error")
        return ast.ErrorDeclaration(loc=loc, members=names, member_locs=locs, annotations=annotations)

    def match_kind_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.MatchKindDeclaration:
        loc, names, locs = self.identifier_list_declaration("match_kind")
        return ast.MatchKindDeclaration(loc=loc, members=names, member_locs=locs, annotations=annotations)

    def constant_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.ConstantDeclaration:
        kw = self.expect("const")
        ctype = self.type_ref()
        name, _ = self.name("a constant name")
        self.expect("=", f"in the declaration of constant {name}")
        value = self.expression()
        self.expect(";", f"after the declaration of constant {name}")
        return ast.ConstantDeclaration(loc=kw.loc, name=name, annotations=annotations, type=ctype, value=value)

    # ============================================================================================== externs

    def extern_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        more = self.annotations()
        annotations = annotations + more
        if self.is_name_token(self.tok) and self.is_extern_object_header():
            name, _ = self.name("an extern name")
            self.declare_type(name)
            type_params = self.type_parameters()
            self.type_scopes.append(set(type_params))
            try:
                self.expect("{", f"to start extern {name}")
                ctors: list[ast.ConstructorPrototype] = []
                methods: list[ast.MethodPrototype] = []
                while not self.accept("}"):
                    m_ann = self.annotations()
                    m_loc = self.tok.loc
                    if self.tok.is_id(name) and self.peek().is_punct("("):
                        self.advance()
                        params = self.parameters()
                        self.expect(";", "after the constructor")
                        ctors.append(ast.ConstructorPrototype(loc=m_loc, name=name, params=params, annotations=m_ann))
                        continue
                    abstract = bool(self.accept("abstract"))
                    methods.append(self.method_prototype(m_ann, m_loc, abstract))
            finally:
                self.type_scopes.pop()
            return ast.ExternDeclaration(
                loc=kw.loc,
                name=name,
                annotations=annotations,
                type_params=type_params,
                constructors=tuple(ctors),
                methods=tuple(methods),
            )
        proto = self.method_prototype((), kw.loc, False)
        return ast.FunctionPrototype(
            loc=kw.loc,
            name=proto.name,
            annotations=annotations,
            return_type=proto.return_type,
            params=proto.params,
            type_params=proto.type_params,
        )

    def is_extern_object_header(self) -> bool:
        """After `extern`: `Name {` or `Name<T, ...> {` (an object) versus `R f(...)` (a function)."""
        nxt = self.peek()
        if nxt.is_punct("{"):
            return True
        if not nxt.is_punct("<"):
            return False
        k = 2
        depth = 1
        while depth:
            tok = self.peek(k)
            if tok.kind == "eof":
                return False
            if tok.is_punct("<"):
                depth += 1
            elif tok.is_punct(">"):
                depth -= 1
            k += 1
        return self.peek(k).is_punct("{")

    def method_prototype(
        self, annotations: tuple[ast.Annotation, ...], loc: SourceLocation, abstract: bool
    ) -> ast.MethodPrototype:
        rtype = self.type_ref()
        tok = self.tok
        if tok.kind != "id":
            self.fail(f"expected a method name, found {self.describe(tok)}")
        self.advance()
        type_params = self.type_parameters()
        self.type_scopes.append(set(type_params))
        try:
            params = self.parameters()
        finally:
            self.type_scopes.pop()
        self.expect(";", f"after the declaration of {tok.text}")
        return ast.MethodPrototype(
            loc=loc,
            name=tok.text,
            return_type=rtype,
            params=params,
            type_params=type_params,
            abstract=abstract,
            annotations=annotations,
        )

    # ============================================================================================== functions

    def function_or_instantiation(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        loc = self.tok.loc
        decl_type = self.type_ref()
        if self.at("("):
            return self.instantiation_rest(annotations, loc, decl_type)
        name, _ = self.name("a declaration name")
        if self.at("<") or self.at("("):
            type_params = self.type_parameters()
            self.type_scopes.append(set(type_params))
            try:
                params = self.parameters()
                body = self.block()
            finally:
                self.type_scopes.pop()
            return ast.FunctionDeclaration(
                loc=loc,
                name=name,
                annotations=annotations,
                return_type=decl_type,
                body=body,
                params=params,
                type_params=type_params,
            )
        self.fail(f"expected '(' after {name}: a top-level declaration must be a function or an instantiation")

    def instantiation_rest(
        self, annotations: tuple[ast.Annotation, ...], loc: SourceLocation, decl_type: ast.Type
    ) -> ast.Instantiation:
        args = self.arguments()
        name, _ = self.name("an instance name")
        initializer: tuple[ast.Declaration, ...] | None = None
        if self.accept("="):
            self.expect("{", "to start the instance initializer")
            decls: list[ast.Declaration] = []
            while not self.accept("}"):
                ann = self.annotations()
                d_loc = self.tok.loc
                d_type = self.type_ref()
                if self.at("("):
                    decls.append(self.instantiation_rest(ann, d_loc, d_type))
                    continue
                d_name, _ = self.name("a method name")
                type_params = self.type_parameters()
                self.type_scopes.append(set(type_params))
                try:
                    params = self.parameters()
                    body = self.block()
                finally:
                    self.type_scopes.pop()
                decls.append(
                    ast.FunctionDeclaration(
                        loc=d_loc,
                        name=d_name,
                        annotations=ann,
                        return_type=d_type,
                        body=body,
                        params=params,
                        type_params=type_params,
                    )
                )
            initializer = tuple(decls)
        self.expect(";", f"after the instantiation of {name}")
        return ast.Instantiation(
            loc=loc, name=name, annotations=annotations, type=decl_type, args=args, initializer=initializer
        )

    def action_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.ActionDeclaration:
        kw = self.advance()
        name, _ = self.name("an action name")
        params = self.parameters()
        body = self.block()
        return ast.ActionDeclaration(loc=kw.loc, name=name, annotations=annotations, body=body, params=params)

    def package_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.PackageType:
        kw = self.advance()
        name, _ = self.name("a package name")
        self.declare_type(name)
        type_params = self.type_parameters()
        self.type_scopes.append(set(type_params))
        try:
            params = self.parameters()
        finally:
            self.type_scopes.pop()
        self.expect(";", f"after package {name}")
        return ast.PackageType(loc=kw.loc, name=name, annotations=annotations, params=params, type_params=type_params)

    # ============================================================================================== parsers

    def parser_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        name, _ = self.name("a parser name")
        self.declare_type(name)
        type_params = self.type_parameters()
        self.type_scopes.append(set(type_params))
        try:
            params = self.parameters()
            if self.accept(";"):
                return ast.ParserType(
                    loc=kw.loc, name=name, annotations=annotations, params=params, type_params=type_params
                )
            ctor_params = self.parameters() if self.at("(") else ()
            self.expect("{", f"to start parser {name}")
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
        finally:
            self.type_scopes.pop()
        return ast.ParserDeclaration(
            loc=kw.loc,
            name=name,
            annotations=annotations,
            params=params,
            type_params=type_params,
            constructor_params=ctor_params,
            locals=tuple(locals_),
            states=tuple(states),
        )

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

    def select_expression(self) -> ast.SelectExpression:
        kw = self.advance()
        self.expect("(", "after 'select'")
        keys = [self.expression()]
        while self.accept(","):
            keys.append(self.expression())
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
        elements = [self.simple_keyset()]
        while self.accept(","):
            elements.append(self.simple_keyset())
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

    # ============================================================================================== controls

    def control_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        name, _ = self.name("a control name")
        self.declare_type(name)
        type_params = self.type_parameters()
        self.type_scopes.append(set(type_params))
        try:
            params = self.parameters()
            if self.accept(";"):
                return ast.ControlType(
                    loc=kw.loc, name=name, annotations=annotations, params=params, type_params=type_params
                )
            ctor_params = self.parameters() if self.at("(") else ()
            self.expect("{", f"to start control {name}")
            locals_: list[ast.Declaration] = []
            while not self.at("apply"):
                if self.tok.kind == "eof" or self.at("}"):
                    self.fail(f"control {name} has no apply block", self.tok)
                locals_.append(self.control_local())
            self.advance()
            body = self.block()
            self.expect("}", f"after the apply block of control {name}")
        finally:
            self.type_scopes.pop()
        return ast.ControlDeclaration(
            loc=kw.loc,
            name=name,
            annotations=annotations,
            body=body,
            params=params,
            type_params=type_params,
            constructor_params=ctor_params,
            locals=tuple(locals_),
        )

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
        name, _ = self.name("a variable name")
        init = self.expression() if self.accept("=") else None
        self.expect(";", f"after the declaration of {name}")
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

    def table_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.TableDeclaration:
        kw = self.advance()
        name, _ = self.name("a table name")
        self.expect("{", f"to start table {name}")
        props: list[ast.TableProperty] = []
        while not self.accept("}"):
            props.append(self.table_property())
        return ast.TableDeclaration(loc=kw.loc, name=name, annotations=annotations, properties=tuple(props))

    def table_property(self) -> ast.TableProperty:
        annotations = self.annotations()
        loc = self.tok.loc
        const = bool(self.accept("const"))
        tok = self.tok
        if tok.kind != "id":
            self.fail(f"expected a table property, found {self.describe(tok)}")
        prop = tok.text
        self.advance()
        self.expect("=", f"after table property '{prop}'")
        if prop == "key":
            self.expect("{", "to start the key")
            elements: list[ast.KeyElement] = []
            while not self.accept("}"):
                e_loc = self.tok.loc
                expr = self.expression()
                self.expect(":", "between the key expression and its match kind")
                mk = self.tok
                if mk.kind != "id":
                    self.fail(f"expected a match kind, found {self.describe(mk)}")
                self.advance()
                e_ann = self.annotations()
                self.expect(";", "after the key element")
                elements.append(
                    ast.KeyElement(loc=e_loc, expr=expr, match_kind=mk.text, match_kind_loc=mk.loc, annotations=e_ann)
                )
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

    # ============================================================================================== statements

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
        loc = self.tok.loc
        target = self.expression()
        if self.accept("="):
            value = self.expression()
            self.expect(";", "after the assignment")
            return ast.AssignmentStatement(loc=loc, left=target, right=value)
        if isinstance(target, ast.Call):
            self.expect(";", "after the call")
            return ast.MethodCallStatement(loc=loc, call=target)
        self.fail(f"expected '=' or a call in this statement, found {self.describe(self.tok)}")

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
        clauses: list[ast.Statement] = []
        while not self.at(end):
            loc = self.tok.loc
            if self.starts_declaration():
                vtype = self.type_ref()
                name, _ = self.name("a variable name")
                init = self.expression() if self.accept("=") else None
                clauses.append(ast.VariableDeclaration(loc=loc, name=name, type=vtype, init=init))
            else:
                target = self.expression()
                if self.accept("="):
                    clauses.append(ast.AssignmentStatement(loc=loc, left=target, right=self.expression()))
                elif isinstance(target, ast.Call):
                    clauses.append(ast.MethodCallStatement(loc=loc, call=target))
                else:
                    self.fail(f"expected '=' or a call in the for header, found {self.describe(self.tok)}")
            if not self.accept(","):
                break
        return tuple(clauses)

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

    # ============================================================================================== expressions

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
        if tok.kind != "punct":
            return None
        if tok.text == ">":
            nxt = self.peek()
            if nxt.is_punct(">") and not nxt.space and nxt.loc.line == tok.loc.line:
                return ">>", 2
            return ">", 1
        if tok.text in _BINARY_PRECEDENCE:
            return tok.text, 1
        return None

    def binary(self, min_level: int) -> ast.Expression:
        """Precedence climbing: operators of level >= min_level, all left-associative."""
        left = self.unary()
        while True:
            found = self.binary_operator()
            if found is None:
                return left
            op, width = found
            level = _BINARY_PRECEDENCE[op]
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
            fields: list[ast.NamedExpression] = []
            while True:
                key = self.tok
                self.advance()
                self.expect("=", "in the structure initializer")
                fields.append(ast.NamedExpression(loc=key.loc, name=key.text, value=self.expression()))
                if not self.accept(","):
                    break
                if self.at("}"):
                    break
                if self.tok.kind != "id":
                    self.fail(f"expected a field name, found {self.describe(self.tok)}")
            self.expect("}", "to close the structure initializer")
            return ast.StructExpression(loc=open_tok.loc, fields=tuple(fields))
        items = [self.expression()]
        while self.accept(","):
            if self.at("}"):
                break
            items.append(self.expression())
        self.expect("}", "to close the list expression")
        return ast.ListExpression(loc=open_tok.loc, items=tuple(items))

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
        if not self.looks_like_type():
            self.fail("not a type argument")
        args = [self.type_ref(allow_dont_care=True)]
        while self.accept(","):
            if not self.looks_like_type():
                self.fail("not a type argument")
            args.append(self.type_ref(allow_dont_care=True))
        self.expect(">")
        if not self.at("("):
            self.fail("type arguments not followed by a call")
        return tuple(args)

    def looks_like_type(self) -> bool:
        tok = self.tok
        if tok.kind != "id":
            return tok.is_punct(".") and self.is_type_name(self.peek().text)
        return tok.text in _BASE_TYPE_KEYWORDS or tok.text == "_" or self.is_type_name(tok.text)

    def arguments(self) -> tuple[ast.Argument, ...]:
        self.expect("(", "to start the argument list")
        args: list[ast.Argument] = []
        if not self.at(")"):
            while True:
                loc = self.tok.loc
                name = None
                if self.tok.kind == "id" and self.peek().is_punct("=") and not self.peek(2).is_punct("="):
                    name = self.advance().text
                    self.advance()
                args.append(ast.Argument(loc=loc, value=self.expression(), name=name))
                if not self.accept(","):
                    break
        self.expect(")", "to close the argument list")
        return tuple(args)


# ================================================================================================== entry points


#: Recursion budget while parsing: long `else if` chains nest one level per branch (Python 3.11 calls between
#: Python functions do not grow the C stack, so a higher limit is safe here).
PARSE_RECURSION_LIMIT = 20_000


def parse_tokens(tokens: list[Token], sources: SourceManager | None = None) -> ast.Program:
    parser = Parser(tokens, sources)
    saved_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved_limit, PARSE_RECURSION_LIMIT))
    try:
        return parser.parse_program()
    except RecursionError:
        parser.speculating = 0
        parser.fail("program nested too deeply to parse")
    finally:
        sys.setrecursionlimit(saved_limit)


def parse_program(
    path: str | os.PathLike[str],
    include_dirs: Iterable[str | os.PathLike[str]] = (),
    defines: Mapping[str, str | None] | None = None,
    *,
    sources: SourceManager | None = None,
) -> ast.Program:
    """Preprocess and parse a P4 file. `defines` maps NAME to VALUE (None means `-D NAME`, i.e. 1)."""
    sources = sources or SourceManager(tuple(include_dirs))
    tokens = Preprocessor(sources, defines).process_file(os.fspath(path))
    return parse_tokens(tokens, sources)


def parse_text(
    text: str,
    filename: str = "<input>",
    include_dirs: Iterable[str | os.PathLike[str]] = (),
    defines: Mapping[str, str | None] | None = None,
    *,
    sources: SourceManager | None = None,
) -> ast.Program:
    """Preprocess and parse P4 source held in memory (`#include <core.p4>` still works)."""
    sources = sources or SourceManager(tuple(include_dirs))
    tokens = Preprocessor(sources, defines).process_text(text, filename)
    return parse_tokens(tokens, sources)
