"""The Mininet fabrics are walks of the controller's stock shapes (`controller.topologies`): same switches and
role hints, same hosts and addresses, same ports on both ends of every link; and the port numbering follows
Mininet's rule (per switch from 1, in link creation order), checked against hand-worked examples."""

from __future__ import annotations

import pytest
from p4fabric.exceptions import TopologySpecError
from p4fabric.topos import TOPOS, parse_topo_spec

from controller import topologies

SPECS = [("single", (3,)), ("leafspine", (3, 2, 2)), ("fattree", (4,)), ("dragonfly", (4, 3, 2)),
         ("torus", (3, 4)), ("torus", (2, 2, 3)), ("ring", (5, 2))]


def test_every_mininet_shape_has_one_builder() -> None:
    # ocs-leafspine is the leafspine model with an OCS below it (tests/unit/p4fabric/test_ocs.py)
    assert set(TOPOS) - {"ocs-leafspine"} == set(topologies.BUILDERS)


@pytest.mark.parametrize(("name", "args"), SPECS)
def test_mininet_topo_is_the_controller_model(name: str, args: tuple[int, ...]) -> None:
    model = topologies.BUILDERS[name](*args)
    topo = parse_topo_spec(",".join([name, *map(str, args)]))
    assert (topo.title, topo.kind) == (model.name, model.kind)
    assert sorted(topo.switches()) == sorted(model.switches)
    for sw in model.switches.values():
        info = topo.nodeInfo(sw.name)
        assert (info["role"], info.get("group"), info.get("coord")) == (sw.role, sw.group, sw.coord)
    assert sorted(topo.hosts()) == sorted(model.hosts)
    links = {}
    for a, b, info in topo.links(withInfo=True):
        links[frozenset(((a, info["port1"]), (b, info["port2"])))] = True
    for h in model.hosts.values():
        assert topo.nodeInfo(h.name)["mac"] == h.mac and topo.nodeInfo(h.name)["ip"] == f"{h.ip}/16"
        assert frozenset(((h.name, 0), (h.switch, h.port))) in links
    for link in model.links:
        assert frozenset(((link.a, link.a_port), (link.b, link.b_port))) in links
    assert len(links) == len(model.hosts) + len(model.links)


def test_torus_ports_follow_creation_order() -> None:
    # 3 x 3, one host each, switches walked row by row: t0_0 gets its host (1), then its +1 neighbours by axis,
    # row first (t1_0: 2, t0_1: 3); its wrap-around links come when t0_2 (axis 1: 4) and later t2_0 (axis 0: 5)
    # are walked.
    topo = topologies.torus(3, 3)
    assert topo.ports("t0_0") == {1: "h1", 2: "t1_0", 3: "t0_1", 4: "t0_2", 5: "t2_0"}
    assert topo.ports("t1_1") == {1: "h5", 2: "t0_1", 3: "t1_0", 4: "t2_1", 5: "t1_2"}


def test_fat_tree_ports_and_addresses() -> None:
    topo = topologies.fat_tree(4)
    assert topo.ports("edge0_0") == {1: "h1", 2: "h2", 3: "agg0_0", 4: "agg0_1"}
    assert topo.ports("agg1_1") == {1: "edge1_0", 2: "edge1_1", 3: "core3", 4: "core4"}
    assert topo.ports("core1") == {1: "agg0_0", 2: "agg1_0", 3: "agg2_0", 4: "agg3_0"}
    assert (topo.hosts["h16"].mac, topo.hosts["h16"].ip) == ("00:00:00:00:00:10", "10.0.0.16")


def test_shape_errors_reach_mininet_as_spec_errors() -> None:
    with pytest.raises(TopologySpecError, match="hosts per leaf must be an integer >= 0"):
        parse_topo_spec("leafspine,2,2,-1")
