"""Source files of one compilation: loading, include search and the text behind every location.

Every token carries the `SourceLocation` of its spelling in its original file, so the "line map" is the tokens
themselves; this module keeps the loaded texts so that a diagnostic can quote the offending line and point a caret
at it, whichever (included) file it is in.
"""

from __future__ import annotations

import os
from pathlib import Path

from p4switch.exceptions import CompileError, Diagnostic, SourceLocation
from p4switch.frontend.lexer import LineIndex

#: The project's own `core.p4` and `v1model.p4` (searched last for `#include <...>`).
SYSTEM_INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"


class SourceManager:
    """Loads each file once and answers "what does line N of file F say" for diagnostics."""

    def __init__(self, include_dirs: tuple[str | os.PathLike[str], ...] | list[str] = ()) -> None:
        self.include_dirs = [Path(d) for d in include_dirs]
        self.system_dirs = [SYSTEM_INCLUDE_DIR]
        self._indexes: dict[str, LineIndex] = {}
        #: every include candidate looked at, and whether it was a file: what decided each `#include`
        #: (p4switch/compile_cache.py keys its entries on it, so a file that would now shadow another is noticed)
        self.probed: dict[str, bool] = {}

    def add_text(self, name: str, text: str) -> LineIndex:
        """Register in-memory source text under `name` (used for `parse_text` and for the main file)."""
        index = LineIndex(text)
        self._indexes[name] = index
        return index

    def load(self, path: str, *, requested_at: SourceLocation | None = None) -> tuple[str, LineIndex]:
        """Read a file (cached). A missing or unreadable file is a diagnostic at `requested_at` (the `#include`)."""
        if path in self._indexes:
            return path, self._indexes[path]
        try:
            text = Path(path).read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
        except OSError as exc:
            reason = exc.strerror or str(exc)
            loc = requested_at or SourceLocation(path, 0, 0)
            message = f"cannot read {path}: {reason}"
            raise CompileError([self.diagnostic(loc, message)]) from None
        return path, self.add_text(path, text)

    def line_text(self, loc: SourceLocation) -> str | None:
        index = self._indexes.get(loc.file)
        if index is None or loc.line < 1:
            return None
        return index.line_text(loc.line)

    def diagnostic(self, loc: SourceLocation, message: str, severity: str = "error") -> Diagnostic:
        return Diagnostic(loc, message, severity=severity, source_line=self.line_text(loc))

    def find_include(self, name: str, *, angled: bool, including_file: str) -> str | None:
        """Resolve `#include "name"` (the including file's directory, then -I dirs, then the system dir) or
        `#include <name>` (-I dirs, then the system dir). Returns a path string or None."""
        candidates: list[Path] = []
        if os.path.isabs(name):
            candidates.append(Path(name))
        else:
            if not angled:
                candidates.append(Path(including_file).parent / name)
            candidates.extend(d / name for d in self.include_dirs)
            candidates.extend(d / name for d in self.system_dirs)
        for candidate in candidates:
            found = candidate.is_file()
            self.probed[os.path.abspath(candidate)] = found
            if found:
                return os.path.normpath(str(candidate))
        return None

    def files_read(self) -> list[str]:
        """The files loaded from disk (not in-memory texts), in the order they were first read."""
        return [name for name in self._indexes if os.path.isfile(name)]
