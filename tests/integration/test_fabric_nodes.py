"""The Mininet layer with real namespaces and veths: P4 switch nodes start on the fabric's ports, answer on their
gRPC port, keep logs and PID files, fail with their log tail, and leave nothing behind.

BMv2's code path runs against the fake `simple_switch_grpc` of tests/unit/targets/fakes (it serves P4Runtime
Capabilities and records its argv); the embedded switch runs for real as `p4ina switch --no-p4`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration]

FAKES = Path(__file__).resolve().parents[1] / "unit" / "targets" / "fakes"


@pytest.fixture
def fake_bmv2_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for fake in FAKES.iterdir():
        target = bindir / fake.name
        target.write_text(f"#!{sys.executable}\n" + fake.read_text())
        target.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("P4INA_STATE_DIR", str(tmp_path / "state"))
    yield bindir


def _gone(pids: list[int]) -> bool:
    from p4fabric.cleanup import pid_alive

    return not any(pid_alive(p) for p in pids)


def _capabilities(address: str) -> str:
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        reply = p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(p4runtime_pb2.CapabilitiesRequest(),
                                                                       timeout=10)
    return str(reply.p4runtime_api_version)


@pytest.mark.usefixtures("fake_bmv2_path")
def test_bmv2_switch_nodes_on_a_leaf_spine(tmp_path: Path) -> None:
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    from controller.topology import Topology

    fabric = Fabric(parse_topo_spec("leafspine,2,2,1", lopts={"bw": 50}), target="bmv2", out_dir=tmp_path / "out")
    with fabric:
        recorded = fabric.run.recorded_pids()
        interfaces = fabric.run.recorded_interfaces()
        leaf = fabric.switch("leaf1")
        assert leaf.port_map() == {1: "leaf1-eth1", 2: "leaf1-eth2", 3: "leaf1-eth3"}
        assert leaf.running is not None and leaf.running.process.alive()
        argv = leaf.running.process.argv
        assert argv[argv.index("--") + 1:argv.index("--") + 3] == ["--grpc-server-addr", leaf.grpc_address]
        assert [a for a in argv if "@" in a] == ["1@leaf1-eth1", "2@leaf1-eth2", "3@leaf1-eth3"]
        for switch in fabric.switches:
            assert _capabilities(switch.grpc_address) == "1.4.1"
            assert (tmp_path / "out" / "logs" / f"{switch.name}.log").exists()
        assert {"leaf1", "leaf2", "spine1", "spine2", "shell-h1", "shell-leaf1"} <= set(recorded)
        assert all(Path(f"/sys/class/net/{i}").exists() for i in interfaces)
        model = fabric.write_topology(tmp_path / "topology.yaml")
        loaded = Topology.load(tmp_path / "topology.yaml")
        assert loaded.switches["spine2"].grpc == fabric.switch("spine2").grpc_address
        assert model.ports("leaf2") == {1: "h2", 2: "spine1", 3: "spine2"}
        h1, h2 = fabric.node("h1"), fabric.node("h2")
        assert h1.IP() == "10.0.0.1" and h2.MAC() == "00:00:00:00:00:02"
    assert _gone(list(recorded.values()))
    assert not any(Path(f"/sys/class/net/{i}").exists() for i in interfaces)
    assert not fabric.run.dir.exists()


def test_switch_that_does_not_start_fails_with_log_tail(tmp_path: Path, fake_bmv2_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from p4fabric.exceptions import FabricStartError
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    monkeypatch.setenv("FAKE_SWITCH_MODE", "fail")
    fabric = Fabric(parse_topo_spec("single,2"), target="bmv2", out_dir=tmp_path / "out")
    with pytest.raises(FabricStartError) as info:
        fabric.start()
    assert "switch s1 exited with status 1" in str(info.value)
    assert "failed to add interface: No such device" in str(info.value)  # the log tail
    assert not Path("/sys/class/net/s1-eth1").exists()
    assert not fabric.run.dir.exists()


@pytest.mark.usefixtures("fake_bmv2_path")
def test_clean_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    """A run killed with SIGKILL leaves switches, host shells and veths; `p4ina run --clean` removes them."""
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from p4fabric.fabric import Fabric\n"
        "from p4fabric.topos import parse_topo_spec\n"
        f"f = Fabric(parse_topo_spec('single,2'), target='bmv2', out_dir=Path({str(tmp_path / 'out')!r}))\n"
        "f.start()\n"
        "print(f.run.run_id, flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    run_id = proc.stdout.readline().strip()
    assert run_id.startswith("p4ina-"), run_id
    from p4fabric.cleanup import RunState

    run = RunState(run_id, tmp_path / "state")
    pids = list(run.recorded_pids().values())
    interfaces = run.recorded_interfaces()
    proc.kill()
    proc.wait()
    assert Path(f"/sys/class/net/{interfaces[0]}").exists()  # the crash left the fabric behind
    from p4fabric.cli import clean

    assert clean(force=False, as_json=False) == 0
    assert _gone(pids)
    assert not any(Path(f"/sys/class/net/{i}").exists() for i in interfaces)
    assert not run.dir.exists()


def _p4ina_switch_problem() -> str | None:
    result = subprocess.run([sys.executable, "-m", "p4ina", "switch", "--help"], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        return lines[-1] if lines else f"exit status {result.returncode}"
    return None


def test_embedded_switch_nodes_no_p4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problem = _p4ina_switch_problem()
    assert problem is None, f"`p4ina switch --help` fails: {problem}"  # a failure, never a skip
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    monkeypatch.setenv("P4INA_STATE_DIR", str(tmp_path / "state"))
    fabric = Fabric(parse_topo_spec("leafspine,2,1,1", lopts={"loss": 1}), target="embedded",
                    out_dir=tmp_path / "out")
    with fabric:
        pids = list(fabric.run.recorded_pids().values())
        for switch in fabric.switches:
            assert _capabilities(switch.grpc_address)
        argv = fabric.switch("leaf1").running.process.argv  # type: ignore[union-attr]
        impair = [argv[i + 1] for i, a in enumerate(argv) if a == "--impair"]
        assert [i.split(":")[:2] for i in impair] == [["1", "both"], ["2", "out"]]  # host link, switch link
        assert all("loss=0.01" in i for i in impair)
    assert _gone(pids)


def test_switch_started_again_when_its_chosen_port_was_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gRPC port is chosen free, then bound by the switch process: another process can take it in between. The
    node chooses again (the first choice here is a port this test holds open)."""
    import socket

    from p4fabric import node as node_module
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    from p4ina.targets.process import free_tcp_port

    monkeypatch.setenv("P4INA_STATE_DIR", str(tmp_path / "state"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        held = int(taken.getsockname()[1])
        choices = iter([held])
        monkeypatch.setattr(node_module, "free_tcp_port", lambda: next(choices, None) or free_tcp_port())
        with Fabric(parse_topo_spec("single,1"), target="embedded", out_dir=tmp_path / "out") as fabric:
            (switch,) = fabric.switches
            assert switch.grpc_address != f"127.0.0.1:{held}"
            assert _capabilities(switch.grpc_address)
