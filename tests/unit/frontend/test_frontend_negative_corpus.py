"""The syntax-error programs of the target corpus (tests/target/programs/neg_*) fail in this project's front end
with exactly the expected location and message, checked in-process (the CLI run is in tests/target)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.exceptions import CompileError
from p4switch.frontend.parser import parse_program
from p4switch.frontend.source import SourceManager

PROGRAMS = Path(__file__).resolve().parents[2] / "target" / "programs"
NEGATIVE = sorted(p.parent for p in PROGRAMS.glob("neg_*/error.txt"))


def expected(case: Path) -> tuple[str, str]:
    line_col, _, message = (case / "error.txt").read_text().strip().partition(": ")
    return line_col, message


def first_error(case: Path) -> CompileError | None:
    try:
        parse_program(case / "prog.p4")
    except CompileError as exc:
        return exc
    return None


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda p: p.name)
def test_negative_program(case: Path) -> None:
    line_col, message = expected(case)
    exc = first_error(case)
    if exc is None:
        # parses fine: a semantic error, reported by the type checker, which quotes lines through our sources
        import p4switch.frontend.typecheck as check
        sources = SourceManager()
        program = parse_program(case / "prog.p4", sources=sources)
        with pytest.raises(CompileError) as info:
            check.check_program(program, line_of=sources.line_text)
        exc = info.value
    diag = exc.diagnostics[0]
    assert f"{diag.location.line}:{diag.location.column}" == line_col, str(exc)
    assert Path(diag.location.file).name == "prog.p4"
    assert message in diag.message, str(exc)
    assert diag.source_line is not None


def test_macro_error_has_a_note_at_the_use() -> None:
    exc = first_error(PROGRAMS / "neg_macro_error")
    assert exc is not None
    note = exc.diagnostics[1]
    assert note.severity == "note" and (note.location.line, note.location.column) == (9, 14)
    assert note.message == "in expansion of macro 'FIELDS'"
