"""The whole parser: top-level declaration dispatch, and the entry points that preprocess and parse a file or a
string."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping

from p4switch.frontend import ast
from p4switch.frontend.lexer import Token
from p4switch.frontend.parser.blocks import BlockParser
from p4switch.frontend.preprocessor import Preprocessor
from p4switch.frontend.source import SourceManager

#: Top-level declarations that start with a keyword (`error` only as `error {`: else it is a type).
DECLARATIONS_BY_KEYWORD: dict[str, Callable[[BlockParser, tuple[ast.Annotation, ...]], ast.Node]] = {
    "const": BlockParser.constant_declaration,
    "extern": BlockParser.extern_declaration,
    "action": BlockParser.action_declaration,
    "parser": BlockParser.parser_declaration,
    "control": BlockParser.control_declaration,
    "package": BlockParser.package_declaration,
    "header": BlockParser.struct_like_declaration,
    "header_union": BlockParser.struct_like_declaration,
    "struct": BlockParser.struct_like_declaration,
    "enum": BlockParser.enum_declaration,
    "typedef": BlockParser.typedef_declaration,
    "type": BlockParser.typedef_declaration,
    "error": BlockParser.error_declaration,
    "match_kind": BlockParser.match_kind_declaration,
}


class Parser(BlockParser):
    """Parses one preprocessed token stream into an `ast.Program`."""

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
        parse = DECLARATIONS_BY_KEYWORD.get(text)
        if parse is not None and (text != "error" or self.peek().is_punct("{")):
            return parse(self, annotations)
        if self.starts_type():
            return self.function_or_instantiation(annotations)
        self.fail(f"expected a declaration, found {self.describe(tok)}")


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
