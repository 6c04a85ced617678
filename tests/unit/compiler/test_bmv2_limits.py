"""The BMv2 back-end restrictions pass (p4switch/bmv2limits): programs p4c-bm2-ss rejects fail here with p4c's
wording at p4c's location; programs it accepts still compile.

Each program in bmv2_errors/ names the p4c testdata or source file that documents its restriction and carries the
expected diagnostics as `// expect-error: LINE:COL: MESSAGE` lines (LINE:COL: where p4c puts its caret, the name
of the declaration or the start of the expression)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from compiler_support import program

from p4switch.compiler import compile_file, compile_text
from p4switch.exceptions import CompileError

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[1]
NEGATIVE = sorted((HERE / "bmv2_errors").glob("*.p4"))
# Programs p4c-bm2-ss compiles: the conformance corpus (compiled with p4c 1.2.5.16), p4c's own BMv2 samples, and
# this project's target programs (valid P4 for BMv2 by design).
ACCEPTED = (sorted((TESTS / "conformance" / "programs").glob("*.p4"))
            + sorted((TESTS / "target" / "p4c_samples").glob("*/*.p4"))
            + sorted(p for p in (TESTS / "target" / "programs").glob("*/prog.p4") if not p.parent.name.startswith("neg_"))
            + [HERE / "programs" / "features.p4"])


def expected_errors(path: Path) -> list[tuple[int, int, str]]:
    found = re.findall(r"^// expect-error: (\d+):(\d+): (.*)$", path.read_text(), flags=re.M)
    return [(int(line), int(col), message) for line, col, message in found]


@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.stem)
def test_rejected_with_p4c_wording(path: Path) -> None:
    expected = expected_errors(path)
    assert expected, f"{path.name} has no expect-error line"
    with pytest.raises(CompileError) as info:
        compile_file(path)
    got = [(d.location.line, d.location.column, d.message) for d in info.value.diagnostics]
    assert got == expected
    assert all(Path(d.location.file).name == path.name for d in info.value.diagnostics)
    lines = path.read_text().splitlines()
    for d in info.value.diagnostics:
        rendered = d.render().splitlines()
        assert rendered[1] == lines[d.location.line - 1].rstrip()
        assert rendered[2] == " " * (d.location.column - 1) + "^"


@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_accepted_programs_still_compile(path: Path) -> None:
    compile_file(path)


HEADERS = "header a_t { bit<8> x; bit<8> y; } struct headers_t { a_t a; }"
PARSER = "state start { pkt.extract(h.a); transition accept; }"
TABLES = """
    action n1() { } action n2() { }
    table t1 { key = { h.a.x : exact; } actions = { n1; n2; } default_action = n1; }
    table t2 { key = { h.a.y : exact; } actions = { n1; } default_action = n1; }
    table t3 { key = { h.a.y : ternary; } actions = { n1; } default_action = n1; }
"""

# p4c-bm2-ss accepts these (backends/bmv2/common/controlFlowGraph.cpp): one apply site per table, or several whose
# successors are the same (CFG::checkMergeable), and no path from a table back to itself.
ACCEPTED_BODIES = {
    "if_else_chain": "if (h.a.x == 1) { t1.apply(); } else if (h.a.x == 2) { t2.apply(); } else { t3.apply(); }",
    "same_table_both_branches_then_join": "if (h.a.x == 1) { t1.apply(); } else { t1.apply(); } t2.apply();",
    "same_table_after_hit_and_miss": "if (t1.apply().hit) { t2.apply(); } else { t2.apply(); }",
    "same_table_in_two_switch_cases": "switch (t1.apply().action_run) { n1: { t2.apply(); } n2: { t2.apply(); } }",
    "constant_false_branch_folded": "if (false) { t1.apply(); } t1.apply();",
    "sequence_of_distinct_tables": "t1.apply(); h.a.y = 1; t2.apply(); if (h.a.x == 0) { t3.apply(); }",
    "return_before_table": "if (h.a.x == 0) { return; } t1.apply();",
    "exit_in_both_branches": "if (h.a.x == 0) { t1.apply(); exit; } else { t1.apply(); exit; }",
    "exit_after_one_site": "if (h.a.x == 0) { t1.apply(); exit; } t1.apply();",
}


@pytest.mark.parametrize("case", sorted(ACCEPTED_BODIES))
def test_accepted_table_placements(case: str) -> None:
    src = program(decls=HEADERS, parser=PARSER, ingress_locals=TABLES, ingress=ACCEPTED_BODIES[case],
                  deparser="pkt.emit(h.a);")
    compile_text(src, case)


REJECTED_BODIES = {
    # (body, table, p4c's reason): CFG::checkMergeable or CFG::dfs
    "different_followers": ("if (h.a.x == 1) { t1.apply(); t2.apply(); } else { t1.apply(); t3.apply(); }", "t1",
                            "has multiple successors"),
    "hit_branch_and_after": ("if (t1.apply().hit) { t2.apply(); } t2.apply();", "t2", "back to itself"),
    "after_exit_in_other_branch": ("if (h.a.x == 0) { t1.apply(); exit; } t1.apply(); t2.apply();", "t1",
                                   "has multiple successors"),
    "sequence_through_condition": ("t1.apply(); if (h.a.x == 0) { t2.apply(); } t1.apply();", "t1", "back to itself"),
}


@pytest.mark.parametrize("case", sorted(REJECTED_BODIES))
def test_rejected_table_placements(case: str) -> None:
    body, table, reason = REJECTED_BODIES[case]
    src = program(decls=HEADERS, parser=PARSER, ingress_locals=TABLES, ingress=body, deparser="pkt.emit(h.a);")
    with pytest.raises(CompileError) as info:
        compile_text(src, case)
    (diag,) = info.value.diagnostics
    if reason == "back to itself":
        assert diag.message == ("Program can not be implemented on this target since it contains a path from table "
                                f"I.{table} back to itself")
    else:
        assert diag.message == f"Program is not supported by this target, because table I.{table} {reason}"
    assert diag.source_line is not None and f"table {table} " in diag.source_line


def test_two_instances_of_one_control_have_their_own_tables() -> None:
    src = program(decls=HEADERS + """
control Sub(inout headers_t h) {
    action n() { }
    table t { key = { h.a.x : exact; } actions = { n; } default_action = n; }
    apply { t.apply(); }
}""", parser=PARSER, ingress_locals="Sub() s1; Sub() s2;", ingress="s1.apply(h); s2.apply(h);",
        deparser="pkt.emit(h.a);")
    compile_text(src, "two_instances")


def test_v1model_found_through_include_dir_is_not_user_code(tmp_path: Path) -> None:
    """`-I` with another copy of core.p4/v1model.p4 (p4c's p4include): their extern functions are BMv2's, not the
    program's own."""
    from p4switch.frontend.source import SYSTEM_INCLUDE_DIR

    for name in ("core.p4", "v1model.p4"):
        (tmp_path / name).write_text((SYSTEM_INCLUDE_DIR / name).read_text())
    src = program(decls=HEADERS, parser=PARSER, ingress="mark_to_drop(sm); h.a.x = 1;", deparser="pkt.emit(h.a);")
    compile_text(src, "own_include", include_dirs=[str(tmp_path)])
    with pytest.raises(CompileError) as info:
        compile_file(HERE / "bmv2_errors" / "unknown_extern_function.p4", include_dirs=[str(tmp_path)])
    assert [d.message for d in info.value.diagnostics] == ["extern_func: unknown extern function"]


def test_p4ina_compile_prints_p4c_message_and_fails(tmp_path: Path) -> None:
    """The command line reports the restriction like any other error: located message, source line, caret, status 1
    and no outputs (so nothing reaches a switch)."""
    import subprocess
    import sys

    path = HERE / "bmv2_errors" / "table_two_sites_multiple_successors.p4"
    result = subprocess.run([sys.executable, "-m", "p4ina", "compile", str(path), "-o", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    ((line, col, message),) = expected_errors(path)
    lines = result.stderr.splitlines()
    assert lines[0] == f"{path}:{line}:{col}: error: {message}"
    assert lines[1:3] == [path.read_text().splitlines()[line - 1], " " * (col - 1) + "^"]
    assert not list(tmp_path.iterdir())
