"""Fuzzing the embedded switch's parser: random and mutated packets through a parser-heavy program
(tests/target/programs/fuzz_parser) in pcap file mode must never crash the switch, and every packet must leave on
exactly the port its summary header says (1 IPv4, 2 IPv6, 3 other, 4 parser error)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROGRAMS = Path(__file__).resolve().parent / "programs"
sys.path.insert(0, str(PROGRAMS))

from cli_forkserver import p4ina_run  # noqa: E402
from fuzz_parser.packets import templates  # noqa: E402
from test_programs import compile_program, read_output, require_commands, write_inputs  # noqa: E402

PORTS = (0, 1, 2, 3, 4)
TEMPLATES = templates()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(TEMPLATES)))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "set"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[pos:]
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "set" and data:
            data[pos] = draw(st.sampled_from([0x00, 0x01, 0x04, 0x06, 0x11, 0x45, 0x81, 0x88, 0xA5, 0xFF]))
    return bytes(data) or b"\x00"


packets = st.lists(st.one_of(mutated(), st.binary(min_size=1, max_size=120)), min_size=20, max_size=120)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_commands()
    out = tmp_path_factory.mktemp("fuzz_parser")
    built = compile_program("fuzz_parser", out)
    assert built.returncode == 0, built.stderr
    return out


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=packets)
def test_random_and_mutated_packets_never_crash(compiled: Path, batch: list[bytes]) -> None:
    for stale in compiled.glob("p*_*.pcap"):
        stale.unlink()
    write_inputs(compiled, PORTS, [(0, p) for p in batch])
    cmd = ["p4ina", "switch", str(compiled / "prog.json"), "--use-files", "0", "--files-dir", str(compiled)]
    for port in PORTS:
        cmd += ["-i", f"{port}@p{port}"]
    run = p4ina_run(cmd, cwd=compiled, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr

    total = 0
    for port in PORTS:
        for out in read_output(compiled / f"p{port}_out.pcap"):
            total += 1
            assert len(out) >= 6, f"port {port}: no summary header in {out.hex()}"
            err, l3 = out[0], out[3]
            assert port != 0, "nothing may leave on the input port"
            assert (err != 0) == (port == 4), f"port {port} with parser error code {err}: {out.hex()}"
            if port == 1:
                assert l3 == 4
            elif port == 2:
                assert l3 == 6
    assert total == len(batch), f"{len(batch)} packets in, {total} out"
