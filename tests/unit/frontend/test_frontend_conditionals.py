"""Property test of conditional compilation: random nests of #if/#ifdef/#ifndef/#elif/#else with random
#defines are rendered to text and preprocessed; the surviving tokens must be exactly those a direct evaluation
of the same tree keeps."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from p4switch.frontend.preprocessor import Preprocessor
from p4switch.frontend.source import SourceManager

NAMES = ("A", "B", "C")


@dataclass
class Text:
    word: str


@dataclass
class Define:
    name: str
    value: int


@dataclass
class Undef:
    name: str


@dataclass
class Cond:
    """`branches` are (kind, name or value, body) for #if/#ifdef/#ifndef then #elif; `otherwise` is #else."""

    branches: list[tuple[str, str, list[object]]]
    otherwise: list[object] | None


def items(depth: int) -> st.SearchStrategy[list[object]]:
    leaf = st.one_of(
        st.builds(Text, st.sampled_from(["x", "y", "z", "w"])),
        st.builds(Define, st.sampled_from(NAMES), st.integers(0, 3)),
        st.builds(Undef, st.sampled_from(NAMES)),
    )
    if depth == 0:
        return st.lists(leaf, max_size=4)
    cond_test = st.one_of(
        st.tuples(st.sampled_from(["ifdef", "ifndef"]), st.sampled_from(NAMES)),
        st.tuples(st.just("if"), st.sampled_from([f"{n} > 1" for n in NAMES] + [f"defined({n})" for n in NAMES])),
    )
    cond = st.builds(
        lambda first, elifs, otherwise: Cond([first, *elifs], otherwise),
        st.tuples(cond_test, items(depth - 1)).map(lambda t: (t[0][0], t[0][1], t[1])),
        st.lists(
            st.tuples(st.sampled_from([f"{n} == 2" for n in NAMES] + ["1", "0"]), items(depth - 1)).map(
                lambda t: ("elif", t[0], t[1])
            ),
            max_size=2,
        ),
        st.one_of(st.none(), items(depth - 1)),
    )
    return st.lists(st.one_of(leaf, cond), max_size=5)


def render(body: list[object], out: list[str]) -> None:
    for item in body:
        if isinstance(item, Text):
            out.append(item.word)
        elif isinstance(item, Define):
            out.append(f"#define {item.name} {item.value}")
        elif isinstance(item, Undef):
            out.append(f"#undef {item.name}")
        elif isinstance(item, Cond):
            for kind, test, inner in item.branches:
                out.append(f"#{kind} {test}")
                render(inner, out)
            if item.otherwise is not None:
                out.append("#else")
                render(item.otherwise, out)
            out.append("#endif")


def evaluate(body: list[object], defs: dict[str, int], out: list[str]) -> None:
    def holds(kind: str, test: str) -> bool:
        if kind == "ifdef":
            return test in defs
        if kind == "ifndef":
            return test not in defs
        if test.startswith("defined("):
            return test[8:-1] in defs
        if test in ("0", "1"):
            return test == "1"
        name, op, value = test.split()
        current = defs.get(name, 0)  # an undefined name is 0 in #if
        return current > int(value) if op == ">" else current == int(value)

    for item in body:
        if isinstance(item, Text):
            out.append(item.word)
        elif isinstance(item, Define):
            defs[item.name] = item.value
        elif isinstance(item, Undef):
            defs.pop(item.name, None)
        elif isinstance(item, Cond):
            for kind, test, inner in item.branches:
                if holds(kind, test):
                    evaluate(inner, defs, out)
                    break
            else:
                if item.otherwise is not None:
                    evaluate(item.otherwise, defs, out)


@settings(max_examples=100, deadline=None)
@given(items(3))
def test_conditional_compilation_matches_a_direct_evaluation(body: list[object]) -> None:
    lines: list[str] = []
    render(body, lines)
    expected: list[str] = []
    evaluate(body, {}, expected)
    tokens = Preprocessor(SourceManager()).process_text("\n".join(lines) + "\n", "c.p4")
    assert [t.text for t in tokens] == expected
