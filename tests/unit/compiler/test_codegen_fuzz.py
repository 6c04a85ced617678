"""Random and mutated packets through a parser-heavy program (the conformance `parser.p4`): the generated pipeline
never raises; every outcome is a parser error code that ingress sees, as in BMv2."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_support import Harness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p4switch.compiler import compile_file

PROGRAM = Path(__file__).resolve().parents[2] / "conformance" / "programs" / "parser.p4"
SEEDS = [bytes.fromhex(h) for h in ("1100000102030405", "21000007aabbccdd", "2101ff0011223344", "310000aa55667788",
                                    "1105050505050505", "f100")]


@pytest.fixture(scope="module")
def harness() -> Harness:
    return Harness(compile_file(PROGRAM))


def check(harness: Harness, frame: bytes) -> None:
    result = harness.run(frame)
    assert 0 <= result.sm.parser_error < len(harness.program.errors)
    assert result.out.endswith(frame[result.ctx.payload_offset:])
    assert len(result.out) >= len(frame) - result.ctx.payload_offset


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=st.binary(max_size=40))
def test_random_packets_never_crash(harness: Harness, frame: bytes) -> None:
    check(harness, frame)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.sampled_from(SEEDS), position=st.integers(0, 15), value=st.integers(0, 255),
       cut=st.integers(0, 16))
def test_mutated_packets_never_crash(harness: Harness, seed: bytes, position: int, value: int, cut: int) -> None:
    frame = bytearray(seed)
    if position < len(frame):
        frame[position] = value
    check(harness, bytes(frame[: max(len(frame) - cut, 0)]))
