"""p4c's own v1model samples (tests/target/p4c_samples/): each is compiled by our compiler and run on the embedded
switch in file mode by the .stf runner `p4ina bench` uses for p4c's sample set (bench/_p4c_stf.py, p4c's bmv2stf
rules), and held to more than bmv2stf asks: ports 0-7 are watched too, and every packet must have exactly the
expected length (`*` nibbles aside). Where p4c's P4Info for the sample is vendored, our P4Info text must equal it.
See p4c_samples/README.md for where each sample comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench._p4c_stf import StfTest, compare_outputs, parse_stf, read_stf, run_stf

SAMPLES = Path(__file__).resolve().parent / "p4c_samples"
NAMES = sorted(p.stem for p in SAMPLES.glob("*/*.p4") if p.parent.name == p.stem)
WATCHED = tuple(range(8))


def strict_problems(test: StfTest, outputs: dict[int, list[bytes]]) -> list[str]:
    """Beyond bmv2stf: a packet on a watched port the .stf does not name, or one longer than expected."""
    expects, anything = test.expectations()
    problems = []
    for port in sorted(set(outputs) | set(expects)):
        if port in anything:
            continue
        got, want = outputs.get(port, []), expects.get(port, [])
        if len(got) != len(want):
            problems.append(f"port {port}: {len(got)} packets, expected {len(want)}")
        for i, (g, w) in enumerate(zip(got, want, strict=False)):
            if len(g) * 2 != len(w.nibbles):
                problems.append(f"port {port} packet {i}: {len(g)} bytes, expected {len(w.nibbles) // 2}")
    return problems


def test_samples_present() -> None:
    assert len(NAMES) >= 5, NAMES
    for name in NAMES:  # each sample checks packets, P4Info or both
        folder = SAMPLES / name
        assert (folder / f"{name}.stf").exists() or (folder / f"{name}.p4info.txtpb").exists(), name


@pytest.mark.parametrize("name", NAMES)
def test_p4c_sample(name: str) -> None:
    from p4switch.compiler import compile_file

    folder = SAMPLES / name
    compiled = compile_file(folder / f"{name}.p4")
    stf = folder / f"{name}.stf"
    test = read_stf(stf) if stf.exists() else parse_stf("")
    run = run_stf(compiled, test, watch=WATCHED)
    assert run.command_error is None, run.command_error
    assert compare_outputs(test, run.outputs) is None
    assert not strict_problems(test, run.outputs), "\n".join(strict_problems(test, run.outputs))
    expected_info = folder / f"{name}.p4info.txtpb"
    if expected_info.exists():
        assert compiled.p4info_text() == expected_info.read_text()
