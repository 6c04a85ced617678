"""Syntax errors are compiler diagnostics (`file:line:col: error: ...`, the line, a caret), never tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p4switch.exceptions import CompileError
from p4switch.frontend.parser import parse_program, parse_text


def error_of(text: str, filename: str = "t.p4") -> str:
    with pytest.raises(CompileError) as exc:
        parse_text(text, filename)
    return str(exc.value)


def test_missing_semicolon_points_at_the_next_token() -> None:
    message = error_of("header h_t {\n    bit<8> a\n    bit<8> b;\n}\n")
    assert message == (
        "t.p4:3:5: error: expected ';' after the field, found 'bit'\n"
        "    bit<8> b;\n"
        "    ^"
    )


def test_unexpected_end_of_file() -> None:
    message = error_of("control C() { apply { x = 1; }\n")
    assert message.splitlines()[0] == (
        "t.p4:1:31: error: expected '}' after the apply block of control C, found end of file"
    )


def test_bad_character_and_unterminated_comment() -> None:
    assert error_of("const bit<8> x = 1 $ 2;").startswith("t.p4:1:20: error: unexpected character '$'")
    assert error_of("\n  /* never closed").startswith("t.p4:2:3: error: unterminated comment")
    assert error_of('const string s = "abc;').startswith("t.p4:1:18: error: unterminated string literal")


def test_error_inside_an_included_file_points_into_that_file(tmp_path: Path) -> None:
    (tmp_path / "defs.p4").write_text("header h_t {\n  bit<8> a;\n  bit<8> = b;\n}\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "defs.p4"\nstruct s_t { h_t h; }\n')
    with pytest.raises(CompileError) as exc:
        parse_program(main)
    first = str(exc.value).splitlines()
    assert first[0] == f"{tmp_path / 'defs.p4'}:3:10: error: expected a field name, found '='"
    assert first[1] == "  bit<8> = b;"
    assert first[2] == "         ^"


def test_error_inside_a_macro_points_at_the_definition_and_the_use(tmp_path: Path) -> None:
    main = tmp_path / "m.p4"
    main.write_text(
        "#define FIELDS(p) bit<8> p##a; bit<8> p##b \\\n"
        "                  bit<8> p##c;\n"
        "header h_t {\n"
        "    FIELDS(x)\n"
        "}\n"
    )
    with pytest.raises(CompileError) as exc:
        parse_program(main)
    diags = exc.value.diagnostics
    assert str(diags[0].location) == f"{main}:2:19"
    assert diags[0].message == "expected ';' after the field, found 'bit'"
    assert diags[1].severity == "note" and str(diags[1].location) == f"{main}:4:5"
    assert "in expansion of macro 'FIELDS'" in str(exc.value)


def test_transition_must_end_a_state() -> None:
    message = error_of("parser P() { state s { transition accept; x = 1; } }")
    assert "after the transition of state s" in message.splitlines()[0]


def test_control_without_apply() -> None:
    assert "control C has no apply block" in error_of("control C() { action a() {} }")


def test_deep_nesting_is_a_diagnostic_not_a_crash() -> None:
    message = error_of("const bit<8> x = " + "(" * 50_000 + "1" + ")" * 50_000 + ";")
    assert "nested too deeply" in message


def test_long_else_if_chains_parse() -> None:
    body = " else ".join(f"if (x == {i}) {{ y = {i}; }}" for i in range(1500))
    program = parse_text("control C(inout bit<16> x, inout bit<16> y) { apply { " + body + " } }", "t.p4")
    assert program.declarations


_P4_TOKENS = [
    "header", "struct", "control", "parser", "state", "transition", "select", "apply", "table", "key", "actions",
    "action", "const", "bit", "<", ">", "8", "0x1F", "8w3", "(", ")", "{", "}", "[", "]", ";", ":", ",", ".", "=",
    "==", "&&&", "..", "+", "-", "|+|", "++", "?", "_", "default", "x", "h_t", "@name", '"s"', "if", "else",
    "switch", "return", "exit", "extern", "enum", "typedef", "#", "\n",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_P4_TOKENS), max_size=40))
def test_random_token_soup_never_crashes(tokens: list[str]) -> None:
    try:
        parse_text(" ".join(tokens), "fuzz.p4")
    except CompileError as exc:
        assert exc.diagnostics and str(exc).startswith("fuzz.p4:")
