"""The front end's fast paths for wide programs (docs/performance.md, "Compile time"): the line-counting lexer, macro
substitution from a per-macro plan with interned hide sets, the field index of struct-like types, the walk with
cached field lists, the token-free check that preprocessed text lexes back, and the collector pause. Expected
values are worked out by hand from the P4_16 lexical rules and the C standard's macro rules (C11 6.10.3)."""

from __future__ import annotations

import gc

import pytest

from p4switch import compiler
from p4switch.exceptions import CompileError, SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.lexer import scan, tokenize
from p4switch.frontend.parser import parse_text
from p4switch.frontend.preprocessed import parser_view, render, text_parser_view, tokens_of
from p4switch.frontend.preprocessor import Preprocessor
from p4switch.frontend.source import SourceManager
from p4switch.frontend.types import BitsT, BoolT, HeaderT


def _positions(text: str) -> list[tuple[str, int, int, bool, bool]]:
    return [(t.text, t.loc.line, t.loc.column, t.bol, t.space) for t in tokenize(text, "f.p4")]


# ------------------------------------------------------------------------------------------------------ the lexer


def test_lines_and_columns_after_multi_line_comments_continuations_and_crlf() -> None:
    text = "a /* one\ntwo */ b\r\nc \\\n d\n  // note\n\te"
    assert _positions(text) == [
        ("a", 1, 1, True, False),
        ("b", 2, 8, False, True),   # the comment ends on line 2: "two */ " is 7 characters
        ("c", 3, 1, True, False),   # "\r\n" is one line break
        ("d", 4, 2, False, True),   # a backslash-newline is space that continues the logical line
        ("e", 6, 2, True, True),
    ]


def test_a_string_with_an_escaped_newline_moves_the_following_tokens_down() -> None:
    text = 'x "a\\\nb" y\nz'
    assert _positions(text) == [("x", 1, 1, True, False), ('"a\\\nb"', 1, 3, False, True),
                                ("y", 2, 4, False, True), ("z", 3, 1, True, False)]


@pytest.mark.parametrize(("text", "where", "message"), [
    ("a\n  $", "f.p4:2:3", "unexpected character '$'"),
    ("a /* x\n*/ 1abc", "f.p4:2:4", "invalid integer literal '1abc'"),
    ("x\n y /* open", "f.p4:2:4", "unterminated comment"),
    ('x "\\\n"\n "', "f.p4:3:2", "unterminated string literal"),
])
def test_lexer_errors_are_located_where_they_start(text: str, where: str, message: str) -> None:
    with pytest.raises(CompileError) as err:
        tokenize(text, "f.p4")
    assert str(err.value.diagnostics[0].location) == where
    assert err.value.diagnostics[0].message == message


def test_scan_hands_every_token_to_its_callback_in_order() -> None:
    items = scan("bit<8>\n  x;", "f.p4", lambda *item: item)
    assert items == [("id", "bit", "f.p4", 1, 1, True, False), ("punct", "<", "f.p4", 1, 4, False, False),
                     ("int", "8", "f.p4", 1, 5, False, False), ("punct", ">", "f.p4", 1, 6, False, False),
                     ("id", "x", "f.p4", 2, 3, True, True), ("punct", ";", "f.p4", 2, 4, False, False)]


# ------------------------------------------------------------------------------------------------ the preprocessor


def _pp(text: str) -> list[str]:
    return [t.text for t in Preprocessor(SourceManager(()), {}).process_text(text, "t.p4")]


def test_c11_example_of_hash_hash_in_a_macro_body() -> None:
    # C11 6.10.3.3 EXAMPLE: join(x, y) expands to "x ## y"
    text = ("#define hash_hash # ## #\n#define mkstr(a) # a\n#define in_between(a) mkstr(a)\n"
            "#define join(c, d) in_between(c hash_hash d)\nchar p[] = join(x, y);")
    assert _pp(text) == ["char", "p", "[", "]", "=", '"x ## y"', ";"]


def test_one_macro_substituted_many_times_with_other_and_empty_arguments() -> None:
    # the plan is made once; every invocation substitutes its own arguments (an empty one next to ## is a
    # placemarker: the other operand stays as it is, C11 6.10.3.3p2-3)
    text = "#define V(p, n) p##n = n;\nV(a, 1) V(b, 2) V(, 3) V(c, )"
    assert _pp(text) == ["a1", "=", "1", ";", "b2", "=", "2", ";", "3", "=", "3", ";", "c", "=", ";"]


def test_hide_sets_stop_self_reference_through_arguments_and_nesting() -> None:
    # C11 6.10.3.5 EXAMPLE 3 (an excerpt): f(y+1) + f(f(z)) with f(a) = a + f(a) and z -> z[0]
    text = "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define z z[0]\nf(y+1) + f(f(z))"
    assert " ".join(_pp(text)) == "f ( 2 * ( y + 1 ) ) + f ( 2 * ( f ( 2 * ( z [ 0 ] ) ) ) )"


def test_the_first_token_of_an_expansion_takes_the_invocations_space() -> None:
    tokens = Preprocessor(SourceManager(()), {}).process_text("#define E(a) a##b c\nx E(y)E()", "t.p4")
    assert [(t.text, t.space) for t in tokens] == [("x", False), ("yb", True), ("c", True), ("b", False),
                                                  ("c", True)]


# ------------------------------------------------------------------------------------------- types and the walk


def test_field_index_and_field_type_take_the_first_of_a_repeated_name() -> None:
    t = HeaderT("h_t", (("a", BitsT(8)), ("b", BoolT()), ("a", BitsT(32))))
    assert t.field_index == {"a": 0, "b": 1}
    assert t.field_type("a") == BitsT(8)
    assert t.field_type("b") == BoolT()
    assert t.field_type("c") is None


def test_walk_is_depth_first_in_source_order() -> None:
    program = parse_text("const bit<8> K = (1 + 2) * f(3, x.y);", "t.p4")
    decl = program.declarations[0]
    assert isinstance(decl, ast.ConstantDeclaration)
    order = [type(n).__name__ for n in ast.walk(decl.value)]
    assert order == ["BinaryOp", "BinaryOp", "IntLiteral", "IntLiteral", "Call", "Name", "Argument",
                     "IntLiteral", "Argument", "Member", "Name"]
    assert [type(n).__name__ for n in ast.children(decl.value)] == ["BinaryOp", "Call"]


# ------------------------------------------------------------------------------- the check that text lexes back


def test_text_parser_view_is_the_view_of_the_texts_tokens() -> None:
    text = "control C(inout bit<8> x) {\n  apply { x = x >> 1; x = (bit<8>)(x > 1 ? 8w1 : 8w0); }\n}\n"
    view = text_parser_view(text, "p.p4")
    assert view == parser_view(tokens_of(text, "p.p4"))
    shifts = [(kind, spelling) for kind, spelling, _bol, joined in view if joined]
    assert shifts == [("punct", ">")]  # the second `>` of `>>`, and only that one


def test_text_parser_view_refuses_directives_like_tokens_of() -> None:
    text = "a b\n#define X 1\n"
    for check in (text_parser_view, tokens_of):
        with pytest.raises(CompileError) as err:
            check(text, "p.p4")
        assert err.value.diagnostics[0].location == SourceLocation("p.p4", 2, 1)
        assert "preprocessing directives are not accepted" in err.value.diagnostics[0].message


def test_a_rendered_program_lexes_back_to_the_view_of_its_tokens() -> None:
    text = "#define S(n) h.v##n = h.v##n >> 1;\ncontrol C() { apply { S(0) S(1) } }\n"
    tokens = Preprocessor(SourceManager(()), {}).process_text(text, "t.p4")
    assert text_parser_view(render(tokens), "t.p4") == parser_view(tokens)


# --------------------------------------------------------------------------------------------- the collector pause


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_off_inside_nested_pauses_and_restored_after(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        pause = compiler._CollectorPause()
        with pause:
            assert not gc.isenabled()
            with pause:
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_failing_compilation_restores_the_collector(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with pytest.raises(CompileError):
            compiler.compile_text("control C( { }\n", "broken")
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()
