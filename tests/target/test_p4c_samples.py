"""p4c's own v1model samples (tests/target/p4c_samples/): each is compiled by our compiler and run on the embedded
switch in file mode; every port's output must match the sample's .stf expectations byte for byte (`*` nibbles
aside), and where p4c's P4Info for the sample is vendored, our P4Info text must equal it. See
p4c_samples/README.md for where each sample comes from."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent / "p4c_samples"
sys.path.insert(0, str(SAMPLES))

from stf import Expectation, parse_stf, read_stf  # noqa: E402

NAMES = sorted(p.stem for p in SAMPLES.glob("*/*.p4") if p.parent.name == p.stem)


def run_sample(name: str) -> tuple[str, dict[int, list[bytes]]]:
    """Compile the sample and push its .stf packets (if it has any) through file mode; (P4Info text, output frames
    per port)."""
    from p4switch.compiler import compile_file
    from p4switch.switch.filemode import FileModeRunner
    from p4switch.switch.pipeline import build_pipeline

    folder = SAMPLES / name
    compiled = compile_file(folder / f"{name}.p4")
    stf = folder / f"{name}.stf"
    if not stf.exists():
        return compiled.p4info_text(), {}
    test = read_stf(stf)
    # ports 0-7 attached too, so a packet sent where the .stf expects none is seen (and fails the comparison)
    ports = sorted(set(range(8)) | {p for p, _ in test.packets} | set(test.expects))
    pipeline = build_pipeline(compiled.p4info, compiled.device_config_bytes(), seed=1)
    runner = FileModeRunner(pipeline, {p: f"p{p}" for p in ports})
    # one packet at a time: the stf runner waits for each packet's output before sending the next
    for i, (port, frame) in enumerate(test.packets):
        runner.process(port, frame, i)
    return compiled.p4info_text(), {p: list(f) for p, f in runner.outputs().items()}


def test_stf_reader() -> None:
    test = parse_stf("# c\npacket 1 0a 0B0c\nexpect 2 0a * * 0c  # tail\nexpect 2 ff\n")
    assert test.packets == [(1, b"\x0a\x0b\x0c")]
    first = test.expects[2][0]
    assert first == Expectation("0a**0c")
    assert first.matches(b"\x0a\x99\x0c") and not first.matches(b"\x0b\x99\x0c") and not first.matches(b"\x0a\x99")
    with pytest.raises(ValueError, match="unsupported"):
        parse_stf("add t 0 a(1)\n")


def test_samples_present() -> None:
    assert len(NAMES) >= 5, NAMES
    for name in NAMES:  # each sample checks packets, P4Info or both
        folder = SAMPLES / name
        assert (folder / f"{name}.stf").exists() or (folder / f"{name}.p4info.txtpb").exists(), name


@pytest.mark.parametrize("name", NAMES)
def test_p4c_sample(name: str) -> None:
    p4info, outputs = run_sample(name)
    stf = SAMPLES / name / f"{name}.stf"
    test = read_stf(stf) if stf.exists() else parse_stf("")
    problems: list[str] = []
    for port in sorted(set(outputs) | set(test.expects)):
        got, want = outputs.get(port, []), test.expects.get(port, [])
        if len(got) != len(want):
            problems.append(f"port {port}: {len(got)} packets, expected {len(want)}")
        for i, (g, w) in enumerate(zip(got, want, strict=False)):
            if not w.matches(g):
                problems.append(f"port {port} packet {i}:\n    got      {g.hex()}\n    expected {w.nibbles}")
    assert not problems, "\n".join(problems)
    expected_info = SAMPLES / name / f"{name}.p4info.txtpb"
    if expected_info.exists():
        assert p4info == expected_info.read_text()
