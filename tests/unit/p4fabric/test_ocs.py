"""The optical circuit switch model (circuit table, reconfiguration with its delay), the OCS leaf-spine's port
layout and controller view, and re-patch planning. Expected circuits are worked out by hand from the layout's
documented numbering (p4fabric.ocsfabric), not read back from the code."""

from __future__ import annotations

import pytest
from p4fabric.exceptions import FabricError, TopologySpecError
from p4fabric.ocs import CircuitTable, OpticalCircuitSwitch
from p4fabric.ocsfabric import OCS_NAME, OcsLayout, plan_repatch
from p4fabric.topofile import controller_topology
from p4fabric.topos import parse_topo_spec

from controller import topologies


class Recorder:
    """A backend that logs calls against a fake clock the OCS's sleep advances."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls: list[tuple[float, str, tuple[int, int]]] = []

    def connect(self, circuit: tuple[int, int]) -> None:
        self.calls.append((self.now, "connect", circuit))

    def disconnect(self, circuit: tuple[int, int]) -> None:
        self.calls.append((self.now, "disconnect", circuit))

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def clock(self) -> float:
        return self.now


def test_circuit_table_connects_each_port_once() -> None:
    table = CircuitTable(range(1, 7), [(2, 1), (3, 5)])
    assert table.circuits() == [(1, 2), (3, 5)]
    assert table.peer(1) == 2 and table.peer(2) == 1 and table.peer(4) is None
    with pytest.raises(FabricError, match="already patched"):
        table.connect(1, 4)
    with pytest.raises(FabricError, match="two different ports"):
        table.connect(4, 4)
    with pytest.raises(FabricError, match="no port 9"):
        table.connect(4, 9)
    with pytest.raises(FabricError, match="no circuit"):
        table.disconnect(1, 3)
    table.disconnect(2, 1)
    assert table.circuits() == [(3, 5)]


def test_circuit_table_diff() -> None:
    table = CircuitTable(range(1, 7), [(1, 2), (3, 4)])
    assert table.diff([(1, 2), (3, 5)]) == ([(3, 4)], [(3, 5)])
    assert table.diff([(2, 1), (4, 3)]) == ([], [])
    with pytest.raises(FabricError):
        table.diff([(1, 2), (2, 3)])  # port 2 twice: not a valid target


def test_reconfigure_darkens_only_changed_circuits_for_the_delay() -> None:
    rec = Recorder()
    ocs = OpticalCircuitSwitch(range(1, 9), rec, reconfig_delay=0.25, sleep=rec.sleep, clock=rec.clock)
    first = ocs.reconfigure([(1, 5), (2, 6)])
    assert first.added == ((1, 5), (2, 6)) and first.removed == ()
    rec.calls.clear()
    change = ocs.reconfigure([(1, 7), (2, 6)])
    # (2, 6) is untouched; (1, 5) goes down, the panel turns for 0.25 s, then (1, 7) comes up
    assert rec.calls == [(0.25, "disconnect", (1, 5)), (0.5, "connect", (1, 7))]
    assert change.removed == ((1, 5),) and change.added == ((1, 7),)
    assert change.dark_seconds == pytest.approx(0.25)
    assert ocs.table.circuits() == [(1, 7), (2, 6)]
    rec.calls.clear()
    same = ocs.reconfigure([(6, 2), (7, 1)])
    assert rec.calls == [] and same.dark_seconds == 0.0


def test_reconfigure_with_a_bad_target_changes_nothing() -> None:
    rec = Recorder()
    ocs = OpticalCircuitSwitch(range(1, 5), rec, reconfig_delay=0.1, sleep=rec.sleep, clock=rec.clock)
    ocs.reconfigure([(1, 2)])
    rec.calls.clear()
    with pytest.raises(FabricError):
        ocs.reconfigure([(1, 3), (3, 4)])
    assert rec.calls == [] and ocs.table.circuits() == [(1, 2)]
    with pytest.raises(FabricError):
        OpticalCircuitSwitch(range(1, 3), rec, reconfig_delay=-1)


def test_layout_ports_and_initial_circuits() -> None:
    lay = OcsLayout(leaves=2, spines=2, hosts_per_leaf=2, spares=1)
    # leaf uplinks 1..4 (leaf1: 1, 2; leaf2: 3, 4), spine1 5-6, spine2 7-8, spare1 9-10
    assert list(lay.ports) == list(range(1, 11))
    assert lay.initial_circuits() == [(1, 5), (2, 7), (3, 6), (4, 8)]
    assert lay.device_ports("spare1") == {9: 1, 10: 2}
    with pytest.raises(FabricError):
        lay.device_ports("leaf1")
    with pytest.raises(TopologySpecError):
        OcsLayout(2, 0, 2)


def test_plan_repatch_moves_the_dead_spines_circuits_to_the_spare() -> None:
    lay = OcsLayout(leaves=2, spines=2, hosts_per_leaf=2, spares=2)
    circuits = lay.initial_circuits()
    # spine1's ports 5 (leaf1) and 6 (leaf2) were patched to leaf ports 1 and 3; spare1's ports are 9 and 10
    after = plan_repatch(lay, circuits, "spine1", "spare1")
    assert after == [(1, 9), (2, 7), (3, 10), (4, 8)]
    # the spare that took spine1's place dies too: its circuits move on to spare2 (ports 11, 12)
    assert plan_repatch(lay, after, "spare1", "spare2") == [(1, 11), (2, 7), (3, 12), (4, 8)]
    with pytest.raises(FabricError, match="not a free spare"):
        plan_repatch(lay, after, "spine2", "spare1")
    with pytest.raises(FabricError, match="no circuits"):
        plan_repatch(lay, after, "spine1", "spare2")


def test_plan_repatch_keeps_the_leaf_ports() -> None:
    lay = OcsLayout(leaves=3, spines=2, hosts_per_leaf=1, spares=1)
    before = {a: b for a, b in lay.initial_circuits()}
    after = {a: b for a, b in plan_repatch(lay, lay.initial_circuits(), "spine2", "spare1")}
    leaf_ports = {lay.leaf_port(i, j) for i in (1, 2, 3) for j in (1, 2)}
    assert set(before) == set(after) == leaf_ports  # every leaf uplink is still patched, on the same port
    for i in (1, 2, 3):
        assert after[lay.leaf_port(i, 2)] == lay.spare_port(1, i)
        assert after[lay.leaf_port(i, 1)] == before[lay.leaf_port(i, 1)] == lay.spine_port(1, i)


def test_ocs_topology_wiring_and_controller_view() -> None:
    topo = parse_topo_spec("ocs-leafspine,2,2,2,1,ocs_ms=20")
    assert sorted(topo.switches()) == ["leaf1", "leaf2", OCS_NAME, "spare1", "spine1", "spine2"]
    assert topo.nodeInfo(OCS_NAME)["reconfig_ms"] == 20
    ocs_ports = []
    for a, b, info in topo.links(withInfo=True):
        assert not {a, b} & {"spine1", "spine2", "spare1"} or OCS_NAME in (a, b), (a, b)  # no direct cable
        if OCS_NAME in (a, b):
            ocs_ports.append(info["port2"] if b == OCS_NAME else info["port1"])
    assert sorted(ocs_ports) == list(range(1, 11))
    grpc = {name: f"127.0.0.1:{5000 + i}" for i, name in enumerate(topo.switches())}
    model = controller_topology(topo, grpc)
    reference = topologies.leaf_spine(2, 2, 2)
    assert sorted(model.switches) == sorted(reference.switches)
    assert sorted((x.a, x.a_port, x.b, x.b_port) for x in model.links) == \
        sorted((x.a, x.a_port, x.b, x.b_port) for x in reference.links)
    assert {h: (x.switch, x.port) for h, x in model.hosts.items()} == \
        {h: (x.switch, x.port) for h, x in reference.hosts.items()}


def test_ocs_topology_rejects_bad_arguments() -> None:
    with pytest.raises(TopologySpecError):
        parse_topo_spec("ocs-leafspine,2,2,2,1,ocs_ms=-1")
    with pytest.raises(TopologySpecError):
        parse_topo_spec("ocs-leafspine,2,2,2,1,colour=3")
