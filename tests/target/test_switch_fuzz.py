"""Random and mutated frames into parser-heavy conformance programs never make the switch fail: every frame ends
as output or a counted drop, never as a pipeline error. Programs compiled in-process by the embedded compiler."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p4switch import compiler
from p4switch.p4info_files import read_p4info as load_p4info
from p4switch.switch.filemode import FileModeRunner, TickClock
from p4switch.switch.pipeline import Pipeline, build_pipeline
from p4switch.switch.ports import read_pcap

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
_PIPELINES: dict[str, tuple[Path, Path]] = {}


def compiled(name: str, tmp: Path) -> Pipeline:
    if name not in _PIPELINES:
        _PIPELINES[name] = compiler.write_outputs(compiler.compile_file(CONFORMANCE / "programs" / f"{name}.p4"), tmp / name)
    p4info_path, config_path = _PIPELINES[name]
    return build_pipeline(load_p4info(p4info_path), Path(config_path).read_bytes(), clock_us=TickClock(), seed=1)


def seeds(name: str) -> list[bytes]:
    return [f for _, f in read_pcap(CONFORMANCE / "cases" / name / "p0_in.pcap")]


@st.composite
def mutated(draw: st.DrawFn, corpus: list[bytes]) -> bytes:
    frame = bytearray(draw(st.sampled_from(corpus)))
    for _ in range(draw(st.integers(0, 6))):
        if not frame:
            break
        i = draw(st.integers(0, len(frame) - 1))
        frame[i] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(frame)))
    return bytes(frame[:cut]) + draw(st.binary(max_size=8))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("program", ["parser", "validity", "hash_csum"])
def test_mutated_and_random_frames_never_fail_the_pipeline(program: str, workdir: Path) -> None:
    pipeline = compiled(program, workdir)
    corpus = seeds(program)

    @settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.one_of(mutated(corpus), st.binary(max_size=96)), min_size=1, max_size=8))
    def check(frames: list[bytes]) -> None:
        runner = FileModeRunner(pipeline, {p: f"p{p}" for p in range(5)}, clock=TickClock())
        runner.process_batch([(0, f, i) for i, f in enumerate(frames)])
        c = runner.engine.counters
        assert c.errors == 0
        assert c.received == len(frames)

    check()
