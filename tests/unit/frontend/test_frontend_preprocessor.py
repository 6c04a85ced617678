"""The C-preprocessor subset: macros, conditionals, includes, and where tokens say they come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.exceptions import CompileError
from p4switch.frontend.preprocessor import Preprocessor, preprocess_file
from p4switch.frontend.source import SourceManager


def pp(text: str, defines: dict[str, str | None] | None = None, include_dirs: tuple[str, ...] = ()) -> str:
    tokens = Preprocessor(SourceManager(include_dirs), defines).process_text(text, "t.p4")
    return " ".join(t.text for t in tokens)


def test_object_like_macro_and_undef() -> None:
    assert pp("#define N 4\nbit<N> x;\n#undef N\nN") == "bit < 4 > x ; N"


def test_function_like_macro_with_nested_parentheses() -> None:
    assert pp("#define ADD(a, b) ((a) + (b))\nADD(f(1, 2), 3)") == "( ( f ( 1 , 2 ) ) + ( 3 ) )"


def test_function_like_name_without_parenthesis_is_not_expanded() -> None:
    assert pp("#define F(x) x\nF + 1") == "F + 1"


def test_token_pasting_and_multi_line_macro() -> None:
    text = "#define V2(a) bit<32> v##a##0; \\\n    bit<32> v##a##1;\nV2(7)"
    assert pp(text) == "bit < 32 > v70 ; bit < 32 > v71 ;"


def test_pasting_an_argument_made_of_pasted_tokens() -> None:
    text = "#define ONE(n) r##n.read(t);\n#define TWO(a) ONE(a##0) ONE(a##1)\nTWO(3)"
    assert pp(text) == "r30 . read ( t ) ; r31 . read ( t ) ;"


def test_stringizing() -> None:
    assert pp('#define S(x) #x\nS(a + "b")') == '"a + \\"b\\""'


def test_variadic_macro() -> None:
    assert pp("#define L(f, ...) f(__VA_ARGS__)\nL(g, 1, 2)") == "g ( 1 , 2 )"


def test_recursive_macro_stops() -> None:
    assert pp("#define X X + 1\nX") == "X + 1"


def test_if_elif_else_with_defined_and_arithmetic() -> None:
    text = """
#define A 3
#if defined(B) || A * 2 > 7
wrong
#elif defined A && (A << 1) == 6
right
#else
wrong2
#endif
"""
    assert pp(text) == "right"


def test_ifdef_ifndef_nesting_and_skipped_unknown_directives() -> None:
    text = """
#ifdef MISSING
#  bogus directive in a skipped group
#  if 1
no
#  endif
#else
yes
#endif
#ifndef MISSING
also
#endif
"""
    assert pp(text) == "yes also"


def test_command_line_defines() -> None:
    assert pp("#if FOO == 2 && defined(BAR)\nok BAR\n#endif", {"FOO": "2", "BAR": None}) == "ok 1"


def test_line_and_pragma_are_tolerated() -> None:
    assert pp('#pragma something odd\n#line 10 "x.p4"\nok') == "ok"


def test_builtin_line_macro() -> None:
    assert pp("\n\n__LINE__") == "3"


def test_error_directive_is_a_diagnostic() -> None:
    with pytest.raises(CompileError) as exc:
        pp("\n#error not supported here")
    assert str(exc.value).startswith("t.p4:2:2: error: #error not supported here")


def test_unterminated_conditional() -> None:
    with pytest.raises(CompileError, match=r"t\.p4:1:2: error: unterminated conditional directive"):
        pp("#if 1\nx")


def test_else_without_if() -> None:
    with pytest.raises(CompileError, match=r"#else without #if"):
        pp("#else")


def test_macro_argument_count_mismatch() -> None:
    with pytest.raises(CompileError, match=r"macro 'F' takes 2 argument\(s\), but 1 given"):
        pp("#define F(a, b) a\nF(1)")


def test_include_quoted_relative_then_dirs_then_system(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "sub" / "local.p4").write_text("local_tok\n")
    (tmp_path / "inc" / "other.p4").write_text("other_tok\n")
    main = tmp_path / "sub" / "main.p4"
    main.write_text('#include "local.p4"\n#include "other.p4"\n#include <other.p4>\n')
    tokens = preprocess_file(main, include_dirs=(str(tmp_path / "inc"),))
    assert [t.text for t in tokens] == ["local_tok", "other_tok", "other_tok"]
    assert tokens[0].loc.file.endswith("local.p4")
    assert tokens[1].loc.file.endswith("other.p4")


def test_angled_include_finds_the_projects_core_p4(tmp_path: Path) -> None:
    main = tmp_path / "m.p4"
    main.write_text("#include <core.p4>\n#include <core.p4>\n")
    tokens = preprocess_file(main)
    assert tokens[0].loc.file.endswith("p4switch/include/core.p4")
    # include guard: the second include adds nothing
    assert sum(1 for t in tokens if t.text == "NoAction") == 1


def test_pragma_once(tmp_path: Path) -> None:
    (tmp_path / "once.p4").write_text("#pragma once\nonce_tok\n")
    main = tmp_path / "m.p4"
    main.write_text('#include "once.p4"\n#include "once.p4"\n')
    assert [t.text for t in preprocess_file(main)] == ["once_tok"]


def test_missing_include_points_at_the_include_line(tmp_path: Path) -> None:
    main = tmp_path / "m.p4"
    main.write_text('\n  #include "nope.p4"\n')
    with pytest.raises(CompileError) as exc:
        preprocess_file(main)
    assert f"{main}:2:12: error: cannot find include file 'nope.p4'" in str(exc.value)


def test_tokens_from_a_macro_remember_their_definition_and_invocation() -> None:
    sources = SourceManager()
    text = "#define PAIR a b\n\nx PAIR\n"
    tokens = Preprocessor(sources).process_text(text, "t.p4")
    a = tokens[1]
    assert (a.text, a.loc.line, a.loc.column) == ("a", 1, 14)
    assert a.macro == "PAIR" and a.expanded_at is not None
    assert (a.expanded_at.line, a.expanded_at.column) == (3, 3)


def test_continuation_keeps_physical_line_numbers() -> None:
    tokens = Preprocessor(SourceManager()).process_text("#define M 1 + \\\n  2\nM\nlast", "t.p4")
    last = tokens[-1]
    assert (last.text, last.loc.line) == ("last", 4)


def test_p4c_bmv2_predefined_macros_can_be_overridden() -> None:
    text = "#ifdef __TARGET_BMV2__\nbmv2 __p4c_major__ __p4c_minor__\n#endif"
    assert pp(text) == "bmv2 1 2"
    assert pp("__p4c_minor__", {"__p4c_minor__": "9"}) == "9"


def test_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    main = tmp_path / "bom.p4"
    main.write_bytes(b"\xef\xbb\xbfconst bit<8> X = 1;\n")
    tokens = preprocess_file(main)
    assert tokens[0].text == "const" and (tokens[0].loc.line, tokens[0].loc.column) == (1, 1)
