"""The target test corpus (tests/target/programs/): compile each program with `p4ina compile`, run it on the
embedded switch in pcap file mode with `p4ina switch`, and compare every port's output with the expected packets.
Negative programs must fail to compile with the expected diagnostic. See programs/README.md."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from cli_forkserver import p4ina_run

PROGRAMS = Path(__file__).resolve().parent / "programs"
sys.path.insert(0, str(PROGRAMS))

from casekit import Expect, exact  # noqa: E402

POSITIVE = sorted(p.parent.name for p in PROGRAMS.glob("*/case.py"))
NEGATIVE = sorted(p.parent.name for p in PROGRAMS.glob("neg_*/error.txt"))
DEFAULT_PORTS = (0, 1, 2, 3, 4)
TIMEOUT_S = 120


def p4ina() -> list[str]:
    exe = Path(sys.executable).parent / "p4ina"
    return [str(exe)] if exe.exists() else [shutil.which("p4ina") or "p4ina"]


def require_commands() -> None:
    """`p4ina compile` and `p4ina switch` must import: a broken one is an ImportError here, never a skip."""
    importlib.import_module("p4switch.compile_cli")
    importlib.import_module("p4switch.switch_cli")


def load_case(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"case_{name}", PROGRAMS / name / "case.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# How a test runs a `p4ina` command line: (argv, cwd) -> the finished process.
Runner = Callable[[Sequence[str], Path], "subprocess.CompletedProcess[str]"]


def installed(argv: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed console script in a new interpreter."""
    return subprocess.run([*p4ina(), *argv[1:]], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd)


def forked(argv: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The same command in a process forked from one that imported p4ina already (cli_forkserver.py): the corpus
    runs a few hundred commands, and a new interpreter spent about a second importing before each."""
    return p4ina_run(argv, cwd=cwd, timeout=TIMEOUT_S)


def compile_program(name: str, out: Path, run: Runner = forked) -> subprocess.CompletedProcess[str]:
    return run(["p4ina", "compile", str(PROGRAMS / name / "prog.p4"), "-o", str(out)], out)


# ------------------------------------------------------------------------------------------------ P4Info ids


def p4info_ids(path: Path) -> dict[str, int]:
    """`kind:name` -> id (and `field:table:name`, `param:action:name`) from a text-format P4Info."""
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    info = p4info_pb2.P4Info()
    text_format.Parse(path.read_text(), info)
    ids: dict[str, int] = {}
    for t in info.tables:
        ids[f"table:{t.preamble.name}"] = t.preamble.id
        for mf in t.match_fields:
            ids[f"field:{t.preamble.name}:{mf.name}"] = mf.id
    for a in info.actions:
        ids[f"action:{a.preamble.name}"] = a.preamble.id
        for p in a.params:
            ids[f"param:{a.preamble.name}:{p.name}"] = p.id
    for kind, items in (
        ("counter", info.counters),
        ("direct_counter", info.direct_counters),
        ("meter", info.meters),
        ("direct_meter", info.direct_meters),
        ("register", info.registers),
        ("value_set", info.value_sets),
        ("digest", info.digests),
        ("action_profile", info.action_profiles),
    ):
        for item in items:
            ids[f"{kind}:{item.preamble.name}"] = item.preamble.id
    return ids


def resolve_entries(template: str, ids: dict[str, int]) -> str:
    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in ids:
            raise AssertionError(f"entries.txtpb: {key} is not in the program's P4Info")
        return str(ids[key])

    return re.sub(r"\$\{([^}]+)\}", sub, template)


# ------------------------------------------------------------------------------------------------ pcap I/O


def write_inputs(out: Path, ports: tuple[int, ...], packets: list[tuple[int, bytes]]) -> None:
    from scapy.utils import RawPcapWriter

    per_port: dict[int, list[tuple[int, bytes]]] = {p: [] for p in ports}
    for i, (port, data) in enumerate(packets):
        per_port[port].append((1_000_000 + i, data))  # one second apart: the switch merges ports by timestamp
    for port, records in per_port.items():
        writer = RawPcapWriter(str(out / f"p{port}_in.pcap"), linktype=1)
        writer.write_header(None)
        for sec, data in records:
            writer.write_packet(data, sec=sec, usec=0)
        writer.close()


def read_output(path: Path) -> list[bytes]:
    from scapy.utils import RawPcapReader

    if not path.exists() or path.stat().st_size == 0:
        return []
    with RawPcapReader(str(path)) as reader:
        return [bytes(data) for data, _meta in reader]


def describe(packets: list[bytes]) -> str:
    return "\n".join(f"    {p.hex()}" for p in packets) or "    (none)"


def compare(port: int, got: list[bytes], expected: list[Expect | bytes]) -> list[str]:
    want = [e if isinstance(e, Expect) else exact(e) for e in expected]
    problems: list[str] = []
    if len(got) != len(want):
        problems.append(f"port {port}: {len(got)} packets, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if not w.matches(g):
            problems.append(f"port {port} packet {i}{' (' + w.note + ')' if w.note else ''}:\n"
                            f"    got      {g.hex()}\n    expected {w.render()}")
    if problems:
        problems.append(f"port {port} got:\n{describe(got)}")
    return problems


# ------------------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("name", POSITIVE)
def test_program(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    run_case(name, tmp_path, request, forked)


@pytest.mark.parametrize("name", ["runtime_tables", "log_assert"])
def test_program_through_the_installed_command(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Two cases (entries, --log-console) as separate interpreters of the installed `p4ina` script, so the
    corpus's fork server never hides a difference between the two ways of starting a command."""
    run_case(name, tmp_path, request, installed)


def run_case(name: str, tmp_path: Path, request: pytest.FixtureRequest, run: Runner) -> None:
    require_commands()
    case = load_case(name)
    known = getattr(case, "KNOWN_ISSUE", None)
    if known:
        # a target bug that is reported but not fixed yet: expected to fail, reported as XPASS once fixed
        request.node.add_marker(pytest.mark.xfail(reason=known, strict=False))
    built = compile_program(name, tmp_path, run)
    assert built.returncode == 0, f"p4ina compile failed:\n{built.stdout}{built.stderr}"
    config = tmp_path / "prog.json"
    p4info = tmp_path / "prog.p4info.txtpb"
    assert config.exists() and p4info.exists(), sorted(p.name for p in tmp_path.iterdir())

    ids = p4info_ids(p4info)
    for wanted in getattr(case, "P4INFO_NAMES", ()):
        assert wanted in ids, f"P4Info lacks {wanted}; has {sorted(ids)}"

    ports: tuple[int, ...] = tuple(getattr(case, "PORTS", DEFAULT_PORTS))
    write_inputs(tmp_path, ports, case.INPUT)
    cmd = ["p4ina", "switch", str(config), "--use-files", "0", "--files-dir", str(tmp_path)]
    for port in ports:
        cmd += ["-i", f"{port}@p{port}"]
    entries = PROGRAMS / name / "entries.txtpb"
    if entries.exists():
        resolved = tmp_path / "entries.txtpb"
        resolved.write_text(resolve_entries(entries.read_text(), ids))
        cmd += ["--entries", str(resolved)]
    log_contains = list(getattr(case, "LOG_CONTAINS", ()))
    if log_contains:
        cmd += ["--log-console", "--log-level", "debug"]
    if hasattr(case, "SEED"):
        cmd += ["--seed", str(case.SEED)]
    switched = run(cmd, tmp_path)
    assert switched.returncode == 0, f"p4ina switch failed ({switched.returncode}):\n{switched.stderr[-4000:]}"

    problems: list[str] = []
    expected: dict[int, list[Expect | bytes]] = case.EXPECTED
    for port in ports:
        got = read_output(tmp_path / f"p{port}_out.pcap")
        problems += compare(port, got, expected.get(port, []))
    for text in log_contains:
        if text not in switched.stderr:
            problems.append(f"log lacks {text!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", NEGATIVE)
def test_negative_program(name: str, tmp_path: Path) -> None:
    require_commands()
    line_col, _, message = (PROGRAMS / name / "error.txt").read_text().strip().partition(": ")
    built = compile_program(name, tmp_path)
    output = built.stdout + built.stderr
    assert built.returncode != 0, f"{name} compiled but must not:\n{output}"
    first = next((ln for ln in output.splitlines() if ": error: " in ln), "")
    assert first, f"no diagnostic in the output:\n{output}"
    where, _, text = first.partition(": error: ")
    assert where.endswith(f"prog.p4:{line_col}"), f"wrong location: {first}"
    assert message in text, f"wrong message: {first}"
    assert "Traceback" not in output
