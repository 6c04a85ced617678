"""The conformance corpus (tests/conformance, made with real p4c + BMv2): every case compiled with `p4ina compile`
and run with `p4ina switch --use-files 0` through the command line; each port's packets must equal BMv2's byte for
byte. Differences are bugs unless docs/targets.md lists them as accepted divergences (none so far). The commands run
in processes forked from one that imported p4ina once (cli_forkserver.py); test_switch_filemode_cli.py runs
`p4ina switch` in file mode as a new interpreter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_forkserver import p4ina_run

from p4switch.switch.ports import read_pcap

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
CASES = sorted(p.name for p in (CONFORMANCE / "cases").iterdir() if p.is_dir())
PORTS = range(5)  # BMv2 ran with ports 0..4 attached


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("conformance-build")


def compile_program(name: str, build_dir: Path) -> Path:
    out = build_dir / name
    config = out / f"{name}.json"
    if not config.exists():
        result = p4ina_run(["p4ina", "compile", str(CONFORMANCE / "programs" / f"{name}.p4"), "-o", str(out)],
                           timeout=300)
        assert result.returncode == 0, f"p4ina compile {name}.p4 failed:\n{result.stderr}"
        assert config.exists(), f"p4ina compile wrote no {config.name} (got {sorted(p.name for p in out.iterdir())})"
    return config


def describe_difference(port: int, got: list[bytes], want: list[bytes]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return f"port {port} packet {i} differs:\n  got  {g.hex()}\n  want {w.hex()}"
    return f"port {port}: {len(got)} packets, BMv2 emitted {len(want)}"


@pytest.mark.parametrize("case", CASES)
def test_case_matches_bmv2(case: str, build_dir: Path, tmp_path: Path) -> None:
    case_dir = CONFORMANCE / "cases" / case
    config = compile_program(case, build_dir)
    shutil.copy(case_dir / "p0_in.pcap", tmp_path / "p0_in.pcap")
    args = ["p4ina", "switch", str(config), "--use-files", "0", *(f"-i{p}@p{p}" for p in PORTS)]
    if (case_dir / "entries.txtpb").exists():
        args += ["--entries", str(case_dir / "entries.txtpb")]
    result = p4ina_run(args, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr
    problems = []
    for port in PORTS:
        got = [f for _, f in read_pcap(tmp_path / f"p{port}_out.pcap")]
        want = [f for _, f in read_pcap(case_dir / f"p{port}_out.pcap")]
        if got != want:
            problems.append(describe_difference(port, got, want))
    assert not problems, "\n".join(problems)
