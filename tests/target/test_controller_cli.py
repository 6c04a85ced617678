"""`p4ina ctl` end to end on embedded P4Runtime servers (loopback): pipeline, jobs, JSON output, one-line errors,
NCCL XML, events; and the failure watcher moving a job off a stopped switch and restoring it when it returns."""

from __future__ import annotations

import argparse
import importlib.util
import json
import threading
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import text_format

import p4switch.server.device as device_mod
import p4switch.server.server as server_mod
from controller import cli
from controller.app import ControllerApp
from controller.fabric import Fabric
from controller.failures import Watcher
from controller.program import IPV4_LPM
from controller.telemetry import collect, metrics_server, to_prometheus
from controller.topologies import leaf_spine
from controller.topology import Topology

REPO = Path(__file__).resolve().parents[2]


def _documented_p4info() -> Any:
    spec = importlib.util.spec_from_file_location("p4ina_p4info_doc",
                                                  REPO / "tests" / "unit" / "controller" / "controller_program_p4info.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.documented_p4info()


@dataclass
class Lab:
    dir: Path
    topo: Topology
    servers: dict[str, Any]

    @property
    def state(self) -> Path:
        return self.dir / "state.json"

    def start(self, name: str, port: int = 0) -> None:
        srv = server_mod.P4RuntimeServer(device_mod.StateDevice(), address=f"127.0.0.1:{port}").start()
        self.servers[name] = srv
        self.topo.switches[name].grpc = f"127.0.0.1:{srv.port}"


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    lab = Lab(tmp_path, leaf_spine(leaves=2, spines=2, hosts_per_leaf=2), {})
    try:
        for name in lab.topo.switches:
            lab.start(name)
        lab.topo.save(tmp_path / "topo.yaml")
        (tmp_path / "p4info.txt").write_text(text_format.MessageToString(_documented_p4info()))
        (tmp_path / "config.json").write_bytes(b"")
        yield lab
    finally:
        for srv in lab.servers.values():
            srv.stop()


def ctl(lab: Lab, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="p4ina")
    cli.register(parser.add_subparsers())
    ns = parser.parse_args(["ctl", *args, "--state", str(lab.state), "--timeout", "20"])
    rc = ns.handler(ns)
    out, err = capsys.readouterr()
    return rc, out, err


def push(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = ctl(lab, capsys, "pipeline", "push", "--p4info", str(lab.dir / "p4info.txt"), "--config",
                       str(lab.dir / "config.json"), "--topology", str(lab.dir / "topo.yaml"), "--json")
    assert rc == 0, err
    assert json.loads(out)["pushed"] == sorted(lab.topo.switches)


def _held(lab: Lab) -> dict[str, int]:
    fab = Fabric(lab.topo, timeout=20)
    try:
        return fab.run(lambda c: len(c.read_all_tables()) + len(c.read_multicast_groups())).results
    finally:
        fab.close()


def test_job_lifecycle_through_the_cli(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    push(lab, capsys)
    forwarding_only = _held(lab)
    assert all(n > 0 for n in forwarding_only.values())
    rc, out, err = ctl(lab, capsys, "job", "create", "h1,h2,h3", "--slots", "32", "--json")
    assert rc == 0, err
    job = json.loads(out)
    assert job["job"] == 1 and job["depth"] == 2 and job["root"].startswith("spine")
    assert [(w["host"], w["child_index"]) for w in job["workers"]] == [("h1", 0), ("h2", 1), ("h3", 0)]

    rc, out, _ = ctl(lab, capsys, "job", "show", "1", "--read-back", "--json")
    assert rc == 0 and all(json.loads(out)["read_back"].values())

    rc, out, err = ctl(lab, capsys, "job", "create", "h4", "--slots", "100000")
    assert rc == 1 and out == ""
    assert err.startswith("p4ina ctl: error: job 2 refused: switch leaf2 has") and err.count("\n") == 1

    rc, out, _ = ctl(lab, capsys, "nccl-topo", "1")
    doc = ET.fromstring(out.split("\n", 1)[1])
    assert doc.find("ring").text == "h1 h2 h3"  # type: ignore[union-attr]
    assert [n.get("host") for n in doc.findall("node")] == ["h1", "h2", "h3"]
    assert doc.find("node/system/cpu/nic/net") is not None

    rc, out, _ = ctl(lab, capsys, "counters", "--prometheus")
    assert rc == 0 and 'p4ina_agg_packets_total{job="1",switch="leaf1"} 0' in out

    rc, out, _ = ctl(lab, capsys, "job", "list", "--json")
    assert [j["job"] for j in json.loads(out)["jobs"]] == [1]

    rc, out, _ = ctl(lab, capsys, "job", "delete", "1")
    assert rc == 0
    assert _held(lab) == forwarding_only, "delete leaves only the forwarding entries"
    rc, out, _ = ctl(lab, capsys, "events", "--json", "--last", "100")
    kinds = [json.loads(line)["kind"] for line in out.splitlines()]
    assert kinds.count("pipeline_pushed") == 4 and "job_created" in kinds and kinds[-1] == "job_deleted"


def test_errors_are_one_line(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = ctl(lab, capsys, "tree", "show", "--members", "h1")
    assert rc == 1 and "no topology" in err and err.count("\n") == 1
    push(lab, capsys)
    for args, message in ((("job", "show", "9"), "no job 9"),
                          (("job", "create", "h1", "nope"), "unknown member host 'nope'"),
                          (("tree", "show"), "give a JOB or --members"),
                          (("link", "down", "leaf1", "leaf2"), "no link between leaf1 and leaf2")):
        rc, _, err = ctl(lab, capsys, *args)
        assert rc == 1 and message in err and err.count("\n") == 1, (args, err)


def test_watcher_moves_a_job_off_a_stopped_switch_and_restores_it(lab: Lab,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    push(lab, capsys)
    rc, out, _ = ctl(lab, capsys, "job", "create", "h1", "h3", "--json")
    assert rc == 0
    root = json.loads(out)["root"]
    app = ControllerApp(lab.state, timeout=10)
    watcher = Watcher(app, lab.topo, probe_interval=0.2)
    try:
        watcher.start()
        port = lab.servers[root].port
        lab.servers[root].stop()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(e.kind == "job_rebuilt" for e in app.events.read()):
            watcher.step(0.2)
        rebuilt = [e for e in app.events.read() if e.kind == "job_rebuilt"]
        assert rebuilt and rebuilt[0].data["root"] != root
        assert [e.switch for e in app.events.read() if e.kind == "switch_lost"] == [root]
        with app.session() as s:
            assert s.state.down_switches == [root]
            back = s.jobs.read_back(1)
            assert {sw: len(v) for sw, v in back.items()} == {sw: len(v) for sw, v in s.state.jobs[1].installed.items()}

        lab.start(root, port)  # the switch comes back empty on the same address
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(e.kind == "switch_back" for e in app.events.read()):
            watcher.step(0.2)
        assert any(e.kind == "switch_back" and e.switch == root for e in app.events.read())
        assert [e.detail for e in app.events.read() if e.kind == "error"] == []
        with app.session() as s:
            assert s.state.down_switches == []
            restored = s.fabric.connected(root).read_all_tables()
            assert restored, "forwarding entries are back on the returned switch"
    finally:
        watcher.fabric.close()


def test_metrics_endpoint_serves_prometheus_text(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    push(lab, capsys)
    ctl(lab, capsys, "job", "create", "h1", "h3")
    app = ControllerApp(lab.state, timeout=20)

    def scrape() -> str:
        with app.session() as s:
            return to_prometheus(collect(s.fabric, s.state.jobs))

    server = metrics_server("127.0.0.1", 0, scrape)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/metrics", timeout=30) as resp:
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            body = resp.read().decode()
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/other", timeout=30)
        assert info.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert "# TYPE p4ina_agg_packets_total counter" in body
    assert 'p4ina_switch_up{switch="spine2"} 1' in body


def _route_actions(lab: Lab, switch: str) -> set[str]:
    fab = Fabric(lab.topo, timeout=20)
    try:
        c = fab.connected(switch)
        helper = c.p4
        return {helper.actions.by(e.action.action.action_id).preamble.name
                for e in c.read_table(IPV4_LPM)}
    finally:
        fab.close()


def test_uplinks_spray_is_chosen_at_push_and_kept_by_reroutes(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    """`pipeline push --uplinks spray` routes over the leaves' two equal-cost uplinks with route_spray (per packet)
    instead of route_ecmp (per flow), and a later reroute (a link declared down, then up) keeps the mode."""
    rc, _, err = ctl(lab, capsys, "pipeline", "push", "--p4info", str(lab.dir / "p4info.txt"), "--config",
                     str(lab.dir / "config.json"), "--topology", str(lab.dir / "topo.yaml"), "--uplinks", "spray")
    assert rc == 0, err
    assert json.loads(lab.state.read_text())["uplinks"] == "spray"
    assert "P4inaIngress.forwarding.route_spray" in _route_actions(lab, "leaf1")
    assert "P4inaIngress.forwarding.route_ecmp" not in _route_actions(lab, "leaf1")
    for state in ("down", "up"):
        rc, _, err = ctl(lab, capsys, "link", state, "leaf2", "spine2")
        assert rc == 0, err
    assert "P4inaIngress.forwarding.route_spray" in _route_actions(lab, "leaf1")
    rc, _, err = ctl(lab, capsys, "pipeline", "push", "--p4info", str(lab.dir / "p4info.txt"), "--config",
                     str(lab.dir / "config.json"), "--uplinks", "ecmp")
    assert rc == 0, err
    assert "P4inaIngress.forwarding.route_ecmp" in _route_actions(lab, "leaf1")
    assert "P4inaIngress.forwarding.route_spray" not in _route_actions(lab, "leaf1")
