"""BMv2's Thrift CLI as the controller and the BMv2 target start it (controller/bmv2_thrift.py), and the slot
clearing that goes through it where P4Runtime register writes are UNIMPLEMENTED (BMv2).

BMv2 is not installable here, so `simple_switch_CLI` is a stand-in with the real one's shape: a
`#!/usr/bin/env python3` script importing a module that only one interpreter on PATH has (as BMv2's Thrift modules
live only in the Python it was installed for), reading commands on stdin and logging them. What the real CLI does
with `register_write` is BMv2's business; what is checked here is which interpreter runs it and what it is told."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_p4rt_double import DoubleServer
from controller_program_p4info import documented_p4info
from google.rpc import code_pb2

from controller import bmv2_thrift
from controller.fabric import Fabric
from controller.jobs import JobManager
from controller.p4info import P4InfoHelper
from controller.program import CELLS_PER_SLOT, SLOT_REGISTERS, P4inaProgram
from controller.state import ControllerState
from controller.topologies import leaf_spine

MODULE = "p4ina_test_bm_runtime"

CLI_SCRIPT = f"""#!/usr/bin/env python3
import os
import sys

import {MODULE}

args = sys.argv[1:]
log = os.environ.get("FAKE_CLI_LOG") or {MODULE}.LOG
with open(log, "a") as out:
    out.write("ARGS " + " ".join(args) + "\\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if line.startswith("register_write nonexistent"):
            print("RuntimeCmd: Error: Invalid register name (nonexistent)")
            continue
        out.write(line + "\\n")
        print("RuntimeCmd: ")
"""


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def bmv2_python(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """(PATH, log file, interpreter) where `simple_switch_CLI` needs a module only `interpreter` can import."""
    log = tmp_path / "cli.log"
    mods = tmp_path / "site"
    mods.mkdir()
    (mods / f"{MODULE}.py").write_text(f"LOG = {str(log)!r}\n")
    cli_dir, py_dir = tmp_path / "bin", tmp_path / "bmv2-python"
    cli_dir.mkdir()
    py_dir.mkdir()
    _executable(cli_dir / "simple_switch_CLI", CLI_SCRIPT)
    interpreter = _executable(py_dir / "python3", f'#!/bin/sh\nPYTHONPATH={mods} exec {sys.executable} "$@"\n')
    yield f"{cli_dir}{os.pathsep}{py_dir}{os.pathsep}/usr/bin", log, interpreter


def test_the_cli_runs_under_the_interpreter_that_has_its_modules(bmv2_python: tuple[str, Path, Path]) -> None:
    path, log, interpreter = bmv2_python
    cli = bmv2_thrift.resolve_cli(path)
    assert cli.interpreter == str(interpreter)
    assert cli.argv == (str(interpreter), str(Path(path.split(os.pathsep)[0]) / "simple_switch_CLI"))
    bmv2_thrift.write_registers("127.0.0.1:9091", [("I.r", 3, 7), ("I.r", 4, 0)], command=cli)
    lines = log.read_text().splitlines()
    assert lines == ["ARGS --thrift-ip 127.0.0.1 --thrift-port 9091", "register_write I.r 3 7", "register_write I.r 4 0"]


def test_a_missing_module_is_named_with_the_interpreters_tried(bmv2_python: tuple[str, Path, Path],
                                                               tmp_path: Path) -> None:
    path, _, interpreter = bmv2_python
    interpreter.unlink()
    with pytest.raises(bmv2_thrift.ThriftCliError) as info:
        bmv2_thrift.resolve_cli(path)
    message = str(info.value)
    assert f"imports {MODULE}" in message and "/usr/bin/python3" in message


def test_a_missing_cli_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(bmv2_thrift.ThriftCliError, match="simple_switch_CLI is not on PATH"):
        bmv2_thrift.resolve_cli(str(tmp_path))


def test_an_error_the_cli_prints_is_raised(bmv2_python: tuple[str, Path, Path]) -> None:
    path, _, _ = bmv2_python
    cli = bmv2_thrift.resolve_cli(path)
    with pytest.raises(bmv2_thrift.ThriftCliError, match="Invalid register name"):
        bmv2_thrift.write_registers("127.0.0.1:9091", [("nonexistent", 0, 0)], command=cli)


@pytest.mark.parametrize("address", ["9090", "host:", ":9090", "host:port", "host:70000"])
def test_bad_thrift_addresses_are_refused(address: str) -> None:
    with pytest.raises(bmv2_thrift.ThriftCliError, match="expected HOST:PORT"):
        bmv2_thrift.split_address(address)


def test_a_venv_python_on_path_is_not_a_candidate(tmp_path: Path) -> None:
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    _executable(venv_bin / "python3", "#!/bin/sh\nexit 1\n")
    assert str(venv_bin / "python3") not in bmv2_thrift.candidate_interpreters("python3", str(venv_bin))


def test_bmv2_slots_are_cleared_over_thrift(bmv2_python: tuple[str, Path, Path],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A switch that answers P4Runtime register writes with UNIMPLEMENTED (simple_switch_grpc) and names a Thrift
    port in the topology gets its granted slots cleared through simple_switch_CLI, and is not reported uncleared."""
    path, log, _ = bmv2_python
    monkeypatch.setenv("PATH", path)
    helper = P4InfoHelper(documented_p4info())
    topo = leaf_spine(leaves=2, spines=1, hosts_per_leaf=1)
    servers = {name: DoubleServer() for name in topo.switches}
    for name, s in servers.items():
        topo.switches[name].grpc = s.address
        s.servicer.refuse_registers = code_pb2.UNIMPLEMENTED
    topo.switches["leaf1"].thrift = "127.0.0.1:9190"
    fab = Fabric(topo, timeout=5)
    try:
        fab.push_pipeline(documented_p4info(), b"{}").raise_first()
        rec = JobManager(topo, fab, P4inaProgram(), helper, ControllerState()).create(["h1", "h2"], slots=4)
    finally:
        fab.close()
        for s in servers.values():
            s.stop()
    assert "leaf1" in rec.grants
    assert rec.uncleared == sorted(sw for sw in rec.grants if sw != "leaf1")
    g = rec.grants["leaf1"]
    cells = range(g.slot_base * CELLS_PER_SLOT, (g.slot_base + g.slot_count) * CELLS_PER_SLOT)
    lines = log.read_text().splitlines()
    assert lines[0] == "ARGS --thrift-ip 127.0.0.1 --thrift-port 9190"
    assert sorted(lines[1:]) == sorted(f"register_write {n} {c} 0" for n in SLOT_REGISTERS for c in cells)
