"""A hand-written recursive-descent parser for P4_16 (precedence climbing for expressions) producing `ast` nodes.

P4's grammar needs to know which identifiers are type names (`T x;` versus `a = b;`, `(T) x` versus `(a)`), so the
parser keeps the set of type names declared so far plus a stack of type-parameter scopes. A `<` after a name or
member is taken as a type-argument list only when it parses as one and is followed by `(` (`pkt.lookahead<bit<8>>()`),
otherwise it is less-than. `>` is always its own token: two adjacent ones form `>>` in expressions.

Entry points: `parse_program(path, include_dirs, defines)` and `parse_text(text, filename)`; both raise
`CompileError` with a located diagnostic (source line and caret) on any syntax error.

One grammar area per module, each a layer of the `Parser` class built on the one before:
`base` (cursor, diagnostics, speculation, names, comma lists) < `expressions` (with keysets and `select`) <
`annotations` < `typerefs` (types, parameters) < `statements` < `declarations` < `tables` < `blocks` (parsers,
controls) < `program` (top level, entry points).
"""

from __future__ import annotations

from p4switch.frontend.parser.program import PARSE_RECURSION_LIMIT, Parser, parse_program, parse_text, parse_tokens

__all__ = ["PARSE_RECURSION_LIMIT", "Parser", "parse_program", "parse_text", "parse_tokens"]
