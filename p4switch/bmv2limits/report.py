"""Diagnostics of the BMv2 restrictions pass, placed where p4c-bm2-ss places them: on the declared name (a table's,
a header type's, an extern instance's), not on the keyword that starts the declaration."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from p4switch.exceptions import Diagnostic, SourceLocation
from p4switch.frontend import ast

LineOf = Callable[[SourceLocation], "str | None"]


@dataclass
class Reporter:
    """Collects diagnostics; `line_of` quotes the source line under each one."""

    line_of: LineOf | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, loc: SourceLocation, message: str) -> None:
        line = self.line_of(loc) if self.line_of is not None else None
        self.diagnostics.append(Diagnostic(loc, message, source_line=line))

    def error_at_name(self, loc: SourceLocation, name: str, message: str, *, last: bool = False) -> None:
        """Report at `name` on the declaration's line: its first whole-word occurrence from `loc` on (a table, a type
        or a parameter: the name follows the keyword or type), or with `last` the one that ends an instance's
        declaration (`T(args) name;`)."""
        self.error(name_location(loc, name, self.line_of, last=last), message)


def name_location(loc: SourceLocation, name: str, line_of: LineOf | None, *, last: bool = False) -> SourceLocation:
    """Where `name` is spelled on `loc`'s line, else `loc` itself (a declaration split over lines)."""
    line = line_of(loc) if line_of is not None else None
    if not line or not name:
        return loc
    word = rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"
    hits = [m.start() for m in re.finditer(word, line) if m.start() >= loc.column - 1]
    if not hits:
        return loc
    if last:  # an instance's name ends the declaration: `T(args) name;` (or `= { ... }`)
        ends = [m.start() for m in re.finditer(word + r"\s*[;={]", line) if m.start() >= loc.column - 1]
        return SourceLocation(loc.file, loc.line, (ends[0] if ends else hits[-1]) + 1)
    return SourceLocation(loc.file, loc.line, hits[0] + 1)


def start_of(e: ast.Node) -> SourceLocation:
    """Where an expression starts (p4c puts the caret at the start of its span; a binary operation's own location
    here is its operator)."""
    return min((n.loc for n in ast.walk(e)), key=lambda loc: (loc.line, loc.column))
