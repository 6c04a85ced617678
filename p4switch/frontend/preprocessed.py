"""Preprocessed P4 text: the program as the device config carries it, and the switch-side way back to tokens.

`render` turns the preprocessor's token stream into text that lexes back to the same stream as the parser sees
it: same kinds and texts, a line break exactly where a logical line began (`@pragma` reads to the end of its line,
`@name(` must not start a new one), and two `>` joined into a shift exactly where the original was one.
`tokens_of` lexes such text with preprocessing disabled: a directive (`#` first on a line) or `##` is refused,
and nothing is expanded, so nothing in the text can make the switch read a file or expand a macro.
"""

from __future__ import annotations

import functools
from typing import Any

from p4switch.exceptions import CompileError, Diagnostic, SourceLocation
from p4switch.frontend.lexer import LineIndex, Token, scan, tokenize


def _is_shift_pair(prev: Token, tok: Token) -> bool:
    """Whether the parser reads `prev tok` as `>>` (expressions.py: adjacent, no space, same line)."""
    return prev.is_punct(">") and tok.is_punct(">") and not tok.space and tok.loc.line == prev.loc.line


def _glue(prev: Token, tok: Token) -> bool:
    """Whether `prev` and `tok` may be written with nothing between them and still lex as these two tokens."""
    if prev.is_punct(">") and tok.is_punct(">"):
        return _is_shift_pair(prev, tok)
    if tok.space:
        return False
    return _lexes_apart(prev.kind, prev.text, tok.kind, tok.text)


@functools.lru_cache(maxsize=65536)
def _lexes_apart(kind_a: str, text_a: str, kind_b: str, text_b: str) -> bool:
    """Whether `text_a + text_b` lexes as exactly these two tokens (the same pairs recur thousands of times in a
    wide program: one lex per distinct pair)."""
    try:
        again = tokenize(text_a + text_b, "<glue>")
    except CompileError:
        return False
    return [(t.kind, t.text) for t in again] == [(kind_a, text_a), (kind_b, text_b)]


def render(tokens: list[Token]) -> str:
    """The token stream as P4 text that `tokens_of` turns back into an equivalent stream."""
    parts: list[str] = []
    prev: Token | None = None
    for tok in tokens:
        if tok.kind == "eof":
            break
        if prev is not None:
            if tok.bol:
                parts.append("\n")
            elif not _glue(prev, tok):
                parts.append(" ")
        parts.append(tok.text)
        prev = tok
    parts.append("\n")
    return "".join(parts)


#: What the parser depends on, per token: kind, text, starts a line, closes a `>>` with the previous one.
View = tuple[str, str, bool, bool]


def parser_view(tokens: list[Token]) -> list[View]:
    """What the parser depends on, per token: kind, text, starts a line, closes a `>>` with the previous one."""
    view: list[View] = []
    append = view.append
    prev_gt = False
    prev_line = 0
    for tok in tokens:
        kind = tok.kind
        if kind == "eof":
            break
        text = tok.text
        gt = kind == "punct" and text == ">"
        line = tok.loc.line if gt else 0
        # as _is_shift_pair: both `>`, adjacent, on one line
        append((kind, text, tok.bol, gt and prev_gt and not tok.space and line == prev_line))
        prev_gt = gt
        prev_line = line
    return view


def text_parser_view(text: str, filename: str) -> list[View]:
    """`parser_view(tokens_of(text, filename))`, with the same errors, without making a `Token` per token: the
    compiler's check that a wide program's text lexes back to its tokens lexes a million of them."""
    view: list[View] = []
    append = view.append
    prev_gt = False
    prev_line = 0
    for kind, spelling, _file, line, column, bol, space in scan(text, filename, _fields):
        if kind == "punct" and (spelling == "##" or (bol and spelling == "#")):
            raise _directive_error(text, SourceLocation(filename, line, column))
        gt = kind == "punct" and spelling == ">"
        append((kind, spelling, bol, gt and prev_gt and not space and line == prev_line))
        prev_gt = gt
        prev_line = line
    return view


def _fields(*item: Any) -> tuple[Any, ...]:
    return item


def tokens_of(text: str, filename: str) -> list[Token]:
    """Lex preprocessed P4 text with preprocessing disabled: a `#` that starts a line (a directive) or a `##` is a
    `CompileError`; the tokens go to the parser as they are, no macro is expanded."""
    tokens = tokenize(text, filename)
    for tok in tokens:
        if (tok.bol and tok.is_punct("#")) or tok.is_punct("##"):
            raise _directive_error(text, tok.loc)
    return tokens


def _directive_error(text: str, loc: SourceLocation) -> CompileError:
    return CompileError([Diagnostic(
        loc, "preprocessing directives are not accepted here: the program must arrive preprocessed",
        source_line=LineIndex(text).line_text(loc.line))])
