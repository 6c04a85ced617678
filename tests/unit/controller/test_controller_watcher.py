"""The failure watcher on P4Runtime doubles: a hung switch (connection open, RPCs never answered) is caught by the
health check and its job moves; a link declared down moves a job off it; both recorded as events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_p4rt_double import DoubleServer
from controller_program_p4info import documented_p4info
from google.protobuf import text_format

from controller.app import ControllerApp
from controller.failures import Watcher, link_change
from controller.topologies import leaf_spine


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[ControllerApp, dict[str, DoubleServer], Watcher]]:
    topo = leaf_spine(leaves=2, spines=2, hosts_per_leaf=1)
    servers = {name: DoubleServer() for name in topo.switches}
    for name, srv in servers.items():
        topo.switches[name].grpc = srv.address
    topo.save(tmp_path / "topo.yaml")
    (tmp_path / "p4info.txt").write_text(text_format.MessageToString(documented_p4info()))
    (tmp_path / "config.json").write_bytes(b"")
    app = ControllerApp(tmp_path / "state.json", timeout=3)
    with app.session(str(tmp_path / "topo.yaml")) as s:
        s.push_pipeline(str(tmp_path / "p4info.txt"), str(tmp_path / "config.json")).raise_first()
        s.jobs.create(["h1", "h2"], slots=8)
    watcher = Watcher(app, topo, probe_interval=0.1)
    try:
        yield app, servers, watcher
    finally:
        for srv in servers.values():
            srv.servicer.hang.clear()
        watcher.fabric.close()
        for srv in servers.values():
            srv.stop()


def test_hung_switch_is_detected_by_the_health_check(lab: tuple[ControllerApp, dict[str, DoubleServer], Watcher]
                                                     ) -> None:
    app, servers, watcher = lab
    watcher.start()
    with app.session() as s:
        root = s.state.jobs[1].tree.root
    servers[root].servicer.hang.set()
    for _ in range(5):
        watcher.step(0.05)
        if any(e.kind == "job_rebuilt" for e in app.events.read()):
            break
    lost = [e for e in app.events.read() if e.kind == "switch_lost"]
    assert [e.switch for e in lost] == [root] and "health check" in lost[0].detail
    with app.session() as s:
        assert s.state.down_switches == [root] and s.state.jobs[1].tree.root != root
        assert root not in s.state.jobs[1].installed


def test_link_down_moves_the_job_and_link_up_restores_forwarding(
        lab: tuple[ControllerApp, dict[str, DoubleServer], Watcher]) -> None:
    app, servers, _ = lab
    with app.session() as s:
        root = s.state.jobs[1].tree.root
        before = {n: len(srv.servicer.tables) for n, srv in servers.items()}
        events = link_change(s, "leaf1", root, up=False)
        assert [e.kind for e in events] == ["link_down", "job_rebuilt"], [e.detail for e in events]
        assert frozenset(("leaf1", root)) not in s.state.jobs[1].tree.links()
        assert s.state.down_links == [sorted(("leaf1", root))]
        assert link_change(s, "leaf1", root, up=False) == []  # already down: nothing to do
        events = link_change(s, root, "leaf1", up=True)
        assert [e.kind for e in events] == ["link_up"] and s.state.down_links == []
    # the job stays where it is (healthy), forwarding is back to what it was: same number of entries everywhere
    after = {n: len(srv.servicer.tables) for n, srv in servers.items()}
    assert sum(after.values()) == sum(before.values())
