"""P4_16 tokens: one lexer shared by the preprocessor (which works on tokens, like cpp) and the parser.

`>` is always a single token, so `register<bit<32>>` closes two type argument lists; the parser joins two adjacent
`>` into a shift. Backslash-newline is whitespace that does not end a line, so multi-line `#define`s stay one
logical line for the preprocessor (`Token.bol` marks the first token of each logical line).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from p4switch.exceptions import CompileError, Diagnostic, SourceLocation

KEYWORDS = frozenset(
    """abstract action apply bit bool break const continue control default else entries enum error exit extern
    false for header header_union if in inout int key list match_kind out package parser priority return select
    state string struct switch table this transition true tuple type typedef value_set varbit void _""".split()
)

# Longest first: the alternation takes the first match.
PUNCTUATORS = (
    "&&&", "|+|", "|-|", "...", "##",
    "..", "&&", "||", "==", "!=", "<=", ">=", "<<", "++",
    "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "?", ":", ";", ",", ".",
    "(", ")", "[", "]", "{", "}", "<", ">", "=", "@", "#",
)  # fmt: skip

_INT = r"(?:\d+[ws])?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|\d[0-9_]*)"
_TOKEN_RE = re.compile(
    r"""
    (?P<newline>\r?\n)
  | (?P<space>[ \t\f\v\r]+|\\\r?\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<ubcomment>/\*)
  | (?P<int>"""
    + _INT
    + r""")(?![A-Za-z0-9_])
  | (?P<badint>\d[A-Za-z0-9_]*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<ustring>")
  | (?P<punct>"""
    + "|".join(re.escape(p) for p in PUNCTUATORS)
    + r""")
    """,
    re.VERBOSE | re.DOTALL,
)


T = TypeVar("T")
_NO_HIDE: frozenset[str] = frozenset()


@dataclass(slots=True)
class Token:
    """One token with its original location.

    `kind` is 'id', 'int', 'string' or 'punct' ('eof' ends a stream). `bol`: first token of a logical line;
    `space`: whitespace before it. Tokens produced by a macro expansion keep the location of their spelling (in the
    `#define` or in the macro argument) and record the outermost invocation in `macro`/`expanded_at`. `hide` is the
    preprocessor's set of macros that must not expand this token again.
    """

    kind: str
    text: str
    loc: SourceLocation
    bol: bool = False
    space: bool = False
    hide: frozenset[str] = _NO_HIDE  # shared: a million tokens need no million empty sets
    macro: str | None = None
    expanded_at: SourceLocation | None = None

    def is_punct(self, text: str) -> bool:
        return self.kind == "punct" and self.text == text

    def is_id(self, text: str | None = None) -> bool:
        return self.kind == "id" and (text is None or self.text == text)


class LineIndex:
    """Maps offsets in a text to 1-based line/column, and lines back to their text (for diagnostics)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for m in re.finditer(r"\n", text):
            self.starts.append(m.end())

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def line_text(self, line: int) -> str:
        if line < 1 or line > len(self.starts):
            return ""
        start = self.starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else len(self.text)].rstrip("\r")


def lex_error(loc: SourceLocation, message: str, source_line: str | None) -> CompileError:
    return CompileError([Diagnostic(loc, message, source_line=source_line)])


def tokenize(text: str, filename: str, index: LineIndex | None = None) -> list[Token]:
    """Split `text` into tokens (comments and whitespace dropped). Raises CompileError on a bad character,
    an unterminated string or an unterminated comment."""
    return scan(text, filename, _make_token, index)


def _make_token(kind: str, text: str, filename: str, line: int, column: int, bol: bool, space: bool) -> Token:
    return Token(kind, text, SourceLocation(filename, line, column), bol, space)


def scan(text: str, filename: str, make: Callable[[str, str, str, int, int, bool, bool], T],
         index: LineIndex | None = None) -> list[T]:
    """The lexer itself: `make(kind, text, filename, line, column, bol, space)` for every token, in order (what
    `tokenize` turns into `Token`s; a caller that needs less, such as the check that a preprocessed text lexes back
    to its tokens, builds something cheaper). Errors as `tokenize` documents them.

    One pass with `finditer`, counting lines as it goes (a wide program is a million tokens: no per-token line
    search). A gap between matches is a character no token starts with; `index` (built only on an error when not
    given) locates it."""
    tokens: list[T] = []
    append = tokens.append
    bol = True
    space = False
    line = 1
    line_start = 0  # offset of the current line's first character
    pos = 0
    for m in _TOKEN_RE.finditer(text):
        start = m.start()
        if start != pos:
            raise _lex_failure(text, filename, index, pos, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        pos = m.end()
        if kind == "newline":
            bol = True
            space = False
            line += 1
            line_start = pos
        elif kind == "id" or kind == "punct" or kind == "int":
            append(make(kind, m.group(), filename, line, start - line_start + 1, bol, space))
            bol = False
            space = False
        elif kind == "space" or kind == "lcomment" or kind == "bcomment":
            space = True
            if kind != "lcomment":
                spelling = m.group()
                if "\n" in spelling:  # a backslash-newline or a comment over several lines
                    line += spelling.count("\n")
                    line_start = start + spelling.rindex("\n") + 1
        elif kind == "string":
            spelling = m.group()
            append(make(kind, spelling, filename, line, start - line_start + 1, bol, space))
            bol = False
            space = False
            if "\n" in spelling:  # an escaped newline inside the literal
                line += spelling.count("\n")
                line_start = start + spelling.rindex("\n") + 1
        elif kind == "badint":
            raise _lex_failure(text, filename, index, start, f"invalid integer literal '{m.group()}'")
        else:  # ubcomment, ustring
            what = "comment" if kind == "ubcomment" else "string literal"
            raise _lex_failure(text, filename, index, start, f"unterminated {what}")
    if pos != len(text):
        raise _lex_failure(text, filename, index, pos, f"unexpected character {text[pos]!r}")
    return tokens


def _lex_failure(text: str, filename: str, index: LineIndex | None, offset: int, message: str) -> CompileError:
    index = index or LineIndex(text)
    line, col = index.position(offset)
    return lex_error(SourceLocation(filename, line, col), message, index.line_text(line))


@functools.lru_cache(maxsize=4096)
def parse_int(text: str) -> tuple[int, int | None, bool, int]:
    """Decode a P4 integer literal: `(value, width or None, signed, base)`; `8w0xFF` -> (255, 8, False, 16).
    Cached: a wide program spells the same few literals a hundred thousand times."""
    width: int | None = None
    signed = False
    m = re.match(r"(\d+)([ws])", text)
    if m and len(text) > m.end():
        width = int(m.group(1))
        signed = m.group(2) == "s"
        text = text[m.end() :]
    body = text.replace("_", "")
    base = 10
    if len(body) > 1 and body[0] == "0" and body[1] in "xXbBoOdD":
        base = {"x": 16, "b": 2, "o": 8, "d": 10}[body[1].lower()]
        body = body[2:]
    return int(body, base), width, signed, base


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def decode_string(text: str) -> str:
    """The value of a string literal token (quotes removed, escapes decoded)."""
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)
