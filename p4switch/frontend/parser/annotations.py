"""Annotations: `@name`, `@pragma ...` (to the end of the line), `@name(unstructured tokens)` and the structured
`@name[expr, ...]` / `@name[k = v, ...]`. Bodies are kept as token text and, where they parse, as expressions."""

from __future__ import annotations

from collections.abc import Callable

from p4switch.exceptions import CompileError
from p4switch.frontend import ast
from p4switch.frontend.lexer import Token
from p4switch.frontend.parser.base import Backtrack, T
from p4switch.frontend.parser.expressions import ExpressionParser


class AnnotationParser(ExpressionParser):
    """Annotation lists, which may precede almost any declaration, parameter, statement or list element."""

    def annotations(self) -> tuple[ast.Annotation, ...]:
        result: list[ast.Annotation] = []
        while self.at("@"):
            result.append(self.annotation())
        return tuple(result)

    def annotation(self) -> ast.Annotation:
        at = self.advance()
        name = self.identifier("an annotation name after '@'").text
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

    def try_expression_list(self, tokens: list[Token]) -> tuple[ast.Expression, ...] | None:
        if not tokens:
            return ()
        return self.try_whole_list(tokens, lambda sub: sub.expression())

    def try_kv_list(self, tokens: list[Token]) -> tuple[ast.NamedExpression, ...] | None:
        if len(tokens) < 2 or tokens[0].kind != "id" or not tokens[1].is_punct("="):
            return None
        return self.try_whole_list(tokens, lambda sub: sub.annotation_pair())

    def try_whole_list(self, tokens: list[Token], item: Callable[[AnnotationParser], T]) -> tuple[T, ...] | None:
        """`tokens` read as a comma-separated list of `item` and nothing else, or None if they are not one."""
        sub = self.sub_parser(tokens)
        try:
            items = sub.comma_list(lambda: item(sub))
            if sub.tok.kind != "eof":
                return None
            return tuple(items)
        except (Backtrack, CompileError):
            return None

    def annotation_pair(self) -> ast.NamedExpression:
        """`key = value` in a structured annotation body."""
        key = self.advance()
        self.expect("=")
        return ast.NamedExpression(loc=key.loc, name=key.text, value=self.expression())
