"""The parser's cursor: token access, diagnostics, speculation, names, type-name scopes and list helpers.

Every grammar layer (`expressions`, `annotations`, `typerefs`, `statements`, `declarations`, `blocks`, `tables`)
builds on `ParserBase`, so these rules exist once: what counts as a name, how a syntax error is reported (or
rewound while speculating), and how comma-separated lists are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import NoReturn, Self, TypeVar

from p4switch.exceptions import CompileError, SourceLocation
from p4switch.frontend.lexer import KEYWORDS, Token
from p4switch.frontend.preprocessor import diagnostics_for
from p4switch.frontend.source import SourceManager

T = TypeVar("T")

# Keywords that may still be used as ordinary names (p4c's `nonTypeName`), e.g. a field called `type` or `key`.
SOFT_KEYWORDS = frozenset({"apply", "key", "actions", "state", "entries", "type", "priority", "list"})
BASE_TYPE_KEYWORDS = frozenset({"bit", "int", "varbit", "bool", "error", "string", "void", "match_kind", "tuple"})


class Backtrack(Exception):
    """Internal: a speculative parse failed; the caller rewinds."""


class ParserBase:
    """State shared by the grammar layers: the token list, the cursor and the type names declared so far."""

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
            raise Backtrack()
        raise CompileError(diagnostics_for(self.sources, tok or self.tok, message))

    def speculate(self, fn: Callable[[], T]) -> T | None:
        """Run `fn`; on a syntax error rewind and return None."""
        saved = self.pos
        self.speculating += 1
        try:
            return fn()
        except Backtrack:
            self.pos = saved
            return None
        finally:
            self.speculating -= 1

    def sub_parser(self, tokens: list[Token]) -> Self:
        """A speculating parser over a token slice (an annotation body) that shares this one's type names."""
        sub = type(self)(tokens, self.sources)
        sub.type_names = self.type_names
        sub.type_scopes = self.type_scopes
        sub.speculating = 1
        return sub

    # ============================================================================================== lists

    def comma_list(self, item: Callable[[], T], *, until: str | None = None) -> list[T]:
        """`item (, item)*`. With `until`, the list may be empty and may end in a comma before that token
        (which is left for the caller to consume)."""
        if until is not None and self.at(until):
            return []
        items = [item()]
        while self.accept(","):
            if until is not None and self.at(until):
                break
            items.append(item())
        return items

    def parenthesized_list(self, item: Callable[[], T], what: str) -> list[T]:
        """`( item, ... )`, possibly empty, no trailing comma: parameter and argument lists."""
        self.expect("(", f"to start the {what}")
        items = [] if self.at(")") else self.comma_list(item)
        self.expect(")", f"to close the {what}")
        return items

    # ============================================================================================== names/types

    def is_type_name(self, name: str) -> bool:
        return name in self.type_names or any(name in scope for scope in self.type_scopes)

    def declare_type(self, name: str) -> None:
        if self.type_scopes:
            self.type_scopes[-1].add(name)
        else:
            self.type_names.add(name)

    @contextmanager
    def type_scope(self, type_params: Iterable[str]) -> Iterator[None]:
        """Type parameters (`<T>`) are type names only inside the declaration that introduces them."""
        self.type_scopes.append(set(type_params))
        try:
            yield
        finally:
            self.type_scopes.pop()

    def is_name_token(self, tok: Token) -> bool:
        return tok.kind == "id" and (tok.text not in KEYWORDS or tok.text in SOFT_KEYWORDS)

    def name(self, what: str = "a name") -> tuple[str, SourceLocation]:
        tok = self.tok
        if not self.is_name_token(tok):
            self.fail(f"expected {what}, found {self.describe(tok)}")
        self.advance()
        return tok.text, tok.loc

    def identifier(self, what: str) -> Token:
        """Any identifier, keywords included (member, method, match-kind and annotation names, list members)."""
        tok = self.tok
        if tok.kind != "id":
            self.fail(f"expected {what}, found {self.describe(tok)}")
        self.advance()
        return tok

    def member_name(self) -> str:
        return self.identifier("a member name").text
