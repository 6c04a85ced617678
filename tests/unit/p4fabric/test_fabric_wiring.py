"""What the runner hands on to the controller and the workers: the topology file's `tls` section and switches'
`priority_queues`, each switch's TLS files from the run's PKI, the `run` flags, and the job's scale exponent down to
the host agent's `Worker`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from p4fabric import hostproc
from p4fabric.cli import register
from p4fabric.control import FabricController
from p4fabric.exceptions import FabricStartError, RunError
from p4fabric.fabric import CONTROLLER_CLIENT, LAUNCHER_CLIENT, switch_tls
from p4fabric.runner import RunOptions
from p4fabric.topofile import write_topology_file
from p4fabric.topos import parse_topo_spec

from controller.topology import Topology
from p4ina.pki import make_fabric_pki


def _grpc(topo: Any) -> dict[str, str]:
    return {sw: f"127.0.0.1:{50000 + i}" for i, sw in enumerate(topo.switches())}


def test_topology_file_carries_tls_and_priority_queues(tmp_path: Path) -> None:
    topo = parse_topo_spec("leafspine,2,1,1")
    pki = make_fabric_pki(tmp_path / "pki", {sw: ["127.0.0.1"] for sw in topo.switches()},
                          clients=(CONTROLLER_CLIENT, LAUNCHER_CLIENT))
    ctl = pki.clients[CONTROLLER_CLIENT]
    path = tmp_path / "run" / "topology.yaml"
    write_topology_file(path, topo, _grpc(topo), priority_queues=8,
                        tls={"ca": str(pki.ca_cert), "cert": str(ctl.cert), "key": str(ctl.key)})
    loaded = Topology.load(path)
    assert loaded.tls is not None
    assert (Path(loaded.tls.ca), Path(loaded.tls.cert), Path(loaded.tls.key)) == (pki.ca_cert, ctl.cert, ctl.key)
    assert {sw.priority_queues for sw in loaded.switches.values()} == {8}


def test_plain_run_topology_file_has_no_tls_and_one_queue(tmp_path: Path) -> None:
    topo = parse_topo_spec("single,2")
    path = tmp_path / "topology.yaml"
    write_topology_file(path, topo, _grpc(topo))
    loaded = Topology.load(path)
    assert loaded.tls is None
    assert {sw.priority_queues for sw in loaded.switches.values()} == {1}
    assert "tls" not in path.read_text()


def test_switch_tls_uses_its_own_certificate_and_the_launcher_client(tmp_path: Path) -> None:
    pki = make_fabric_pki(tmp_path, {"s1": ["127.0.0.1"], "s2": ["127.0.0.1"]},
                          clients=(CONTROLLER_CLIENT, LAUNCHER_CLIENT))
    tls = switch_tls(pki, "s2")
    assert (tls.cert, tls.key, tls.ca) == (pki.servers["s2"].cert, pki.servers["s2"].key, pki.ca_cert)
    assert (tls.client_cert, tls.client_key) == (pki.clients[LAUNCHER_CLIENT].cert, pki.clients[LAUNCHER_CLIENT].key)
    with pytest.raises(FabricStartError, match="no certificate for switch s9"):
        switch_tls(pki, "s9")


def test_run_flags_reach_the_options(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--topo", "single,2", "--out", str(tmp_path), "--tls", "--priority-queues", "4"])
    assert (args.tls, args.priority_queues) == (True, 4)
    defaults = parser.parse_args(["run", "--topo", "single,2", "--out", str(tmp_path)])
    assert (defaults.tls, defaults.priority_queues) == (False, 1)
    with pytest.raises(RunError, match=r"--priority-queues must be in 1\.\.8"):
        RunOptions(topo="single,2", out=tmp_path, priority_queues=9).validate()


def test_a_new_run_does_not_inherit_an_earlier_runs_controller_state(tmp_path: Path) -> None:
    """Rerunning into the same --out: the earlier run's jobs held slots on switches that are gone; kept, its state
    made the third run's job find no free slots."""
    ctl_dir = tmp_path / "controller"
    ctl_dir.mkdir()
    for name in ("state.json", "events.jsonl", "watch.log"):
        (ctl_dir / name).write_text('{"jobs": {"1": {"slots": 128}}}\n')
    ctl = FabricController(tmp_path, tmp_path / "topology.yaml", tmp_path / "p4info.txt", tmp_path / "dev.json")
    assert not ctl.state_file.exists() and not ctl.events_file.exists() and not ctl.watch_log.exists()


def test_window_flag_reaches_the_run_options(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--topo", "single,2", "--out", str(tmp_path), "--slots", "64", "--window", "32"])
    assert args.window == 32
    with pytest.raises(RunError, match=r"--window must be in 1\.\.--slots \(64\)"):
        RunOptions(topo="single,2", out=tmp_path, slots=64, window=65).validate()


def test_job_scale_is_read_from_the_controller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctl = FabricController(tmp_path, tmp_path / "topology.yaml", tmp_path / "p4info.txt", tmp_path / "dev.json")
    answers = {"job": {"job": 3, "slots": 16, "scale": -4, "workers": [], "grants": {}}, "tree": {"root": "s1"}}
    monkeypatch.setattr(ctl, "ctl", lambda *args: answers[args[0]])
    assert ctl.job(3).scale == -4


def test_hostproc_passes_the_scale_and_window_to_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    class StopHere(Exception):
        pass

    class FakeWorker:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            seen.update(kwargs)

        def allreduce(self, data: Any) -> Any:
            raise StopHere

    class FakeTransport:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr("hostagent.worker.Worker", FakeWorker)
    monkeypatch.setattr("hostagent.transport.UdpTransport", FakeTransport)
    args = hostproc.parse_args(["innet", "--rank", "0", "--world", "2", "--size", "8", "--out", str(tmp_path / "o"),
                                "--ip", "10.0.0.1", "--scale", "-3", "--window", "16"])
    out = hostproc.Output(tmp_path / "o.jsonl")
    try:
        with pytest.raises(StopHere):
            hostproc.run_innet(args, out)
    finally:
        out.close()
    assert (seen["scale_exp"], seen["max_window"]) == (-3, 16)
    assert hostproc.parse_args(["ring", "--rank", "0", "--world", "1", "--size", "1", "--out", "o",
                                "--ip", "1.2.3.4"]).scale == 0
