"""Stock topologies: node and link counts, degrees, port numbering and the controller's topology file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from p4fabric.exceptions import TopologySpecError
from p4fabric.topos import FabricTopo, host_addresses, parse_topo_spec


def _degrees(topo: FabricTopo) -> Counter[str]:
    degrees: Counter[str] = Counter()
    for a, b in topo.links():
        degrees[a] += 1
        degrees[b] += 1
    return degrees


def _switch_links(topo: FabricTopo) -> list[tuple[str, str]]:
    return [(a, b) for a, b in topo.links() if topo.isSwitch(a) and topo.isSwitch(b)]


def test_single() -> None:
    topo = parse_topo_spec("single,3")
    assert topo.switches() == ["s1"] and len(topo.hosts()) == 3
    assert _degrees(topo)["s1"] == 3


@pytest.mark.parametrize(("leaves", "spines", "hpl"), [(2, 2, 2), (4, 2, 1), (3, 1, 0)])
def test_leaf_spine_counts_and_degrees(leaves: int, spines: int, hpl: int) -> None:
    topo = parse_topo_spec(f"leafspine,{leaves},{spines},{hpl}")
    assert len(topo.switches()) == leaves + spines
    assert len(topo.hosts()) == leaves * hpl
    assert len(_switch_links(topo)) == leaves * spines
    degrees = _degrees(topo)
    for leaf in range(1, leaves + 1):
        assert degrees[f"leaf{leaf}"] == spines + hpl
    for spine in range(1, spines + 1):
        assert degrees[f"spine{spine}"] == leaves
    assert topo.kind == "leaf-spine"


def test_leaf_spine_ports_hosts_first() -> None:
    topo = parse_topo_spec("leafspine,2,2,2")
    ports = {(a, b): (info["port1"], info["port2"]) for a, b, info in topo.links(withInfo=True)}
    assert ports[("h1", "leaf1")] == (0, 1) and ports[("h2", "leaf1")] == (0, 2)
    assert ports[("leaf1", "spine1")] == (3, 1) and ports[("leaf2", "spine2")] == (4, 2)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_fat_tree(k: int) -> None:
    topo = parse_topo_spec(f"fattree,{k}")
    half = k // 2
    assert len(topo.switches()) == half * half + k * k  # cores + (aggs + edges) per pod
    assert len(topo.hosts()) == k ** 3 // 4
    assert len(_switch_links(topo)) == k * half * half * 2
    degrees = _degrees(topo)
    # every switch of a k-ary fat-tree has exactly k ports in use
    assert all(degrees[s] == k for s in topo.switches())
    assert {topo.nodeInfo(s)["role"] for s in topo.switches()} == {"core", "agg", "edge"}


def test_fat_tree_rejects_odd_k() -> None:
    with pytest.raises(TopologySpecError, match="even"):
        parse_topo_spec("fattree,3")


def test_dragonfly() -> None:
    groups, routers, hosts = 4, 3, 2
    topo = parse_topo_spec(f"dragonfly,{groups},{routers},{hosts}")
    assert len(topo.switches()) == groups * routers
    assert len(topo.hosts()) == groups * routers * hosts
    local = groups * routers * (routers - 1) // 2
    global_links = groups * (groups - 1) // 2
    assert len(_switch_links(topo)) == local + global_links
    pairs = {frozenset((topo.nodeInfo(a)["group"], topo.nodeInfo(b)["group"])) for a, b in _switch_links(topo)
             if topo.nodeInfo(a)["group"] != topo.nodeInfo(b)["group"]}
    assert len(pairs) == global_links  # one global link per pair of groups


@pytest.mark.parametrize(("dims", "links"), [((3, 3), 18), ((4, 3), 24), ((2, 2, 2), 12), ((3, 3, 3), 81)])
def test_torus(dims: tuple[int, ...], links: int) -> None:
    topo = parse_topo_spec("torus," + ",".join(map(str, dims)))
    count = 1
    for d in dims:
        count *= d
    assert len(topo.switches()) == count
    assert len(_switch_links(topo)) == links
    degrees = _degrees(topo)
    expected = sum(2 if d > 2 else 1 for d in dims) + 1  # +1 host
    assert all(degrees[s] == expected for s in topo.switches())
    assert topo.nodeInfo(topo.switches()[0])["coord"] == (0,) * len(dims)


def test_ring() -> None:
    topo = parse_topo_spec("ring,5,2")
    assert len(_switch_links(topo)) == 5 and len(topo.hosts()) == 10
    assert all(_degrees(topo)[s] == 4 for s in topo.switches())
    assert len(_switch_links(parse_topo_spec("ring,2"))) == 1


@pytest.mark.parametrize(("spec", "message"), [
    ("", "empty"), ("mesh,3", "unknown topology"), ("leafspine,x", "not an integer"),
    ("leafspine,0,1", "leaves must be"), ("torus,3", "2 or 3 dimensions"), ("torus,1,3", "dimension"),
    ("single,1,2,3,4", "positional"),
])
def test_bad_specs_are_clear(spec: str, message: str) -> None:
    with pytest.raises(TopologySpecError, match=message):
        parse_topo_spec(spec)


def test_host_addresses_are_unique_and_deterministic() -> None:
    topo = parse_topo_spec("fattree,4")
    macs = {topo.nodeInfo(h)["mac"] for h in topo.hosts()}
    ips = {topo.nodeInfo(h)["ip"] for h in topo.hosts()}
    assert len(macs) == len(ips) == 16
    assert host_addresses(258) == ("00:00:00:00:01:02", "10.0.1.2")


def test_controller_topology_file(tmp_path: Path) -> None:
    from p4fabric.topofile import write_topology_file

    from controller.topology import Topology

    topo = parse_topo_spec("leafspine,2,2,2", lopts={"bw": 100})
    grpc = {name: f"127.0.0.1:{50000 + i}" for i, name in enumerate(topo.switches())}
    write_topology_file(tmp_path / "topo.yaml", topo, grpc)
    loaded = Topology.load(tmp_path / "topo.yaml")
    assert loaded.kind == "leaf-spine"
    assert set(loaded.switches) == {"leaf1", "leaf2", "spine1", "spine2"}
    assert loaded.switches["leaf2"].grpc == grpc["leaf2"] and loaded.switches["leaf2"].role == "leaf"
    assert loaded.hosts["h3"].switch == "leaf2" and loaded.hosts["h3"].port == 1
    assert loaded.hosts["h3"].ip == "10.0.0.3"
    assert loaded.ports("leaf1") == {1: "h1", 2: "h2", 3: "spine1", 4: "spine2"}
    assert all(link.bandwidth_mbps == 100 for link in loaded.links)


def test_switch_ports_get_the_run_tag() -> None:
    from p4fabric.fabric import tag_switch_interfaces

    topo = parse_topo_spec("leafspine,2,2,1")
    tag_switch_interfaces(topo, "pq7")
    names = {(info["node1"], info["node2"]): (info.get("intfName1"), info.get("intfName2"))
             for _a, _b, info in topo.links(withInfo=True)}
    assert names[("h1", "leaf1")] == (None, "pq7leaf1-1")  # the host end keeps Mininet's name
    assert names[("leaf1", "spine2")] == ("pq7leaf1-3", "pq7spine2-1")


def test_interface_names_must_fit_linux_limit() -> None:
    from p4fabric.exceptions import FabricError
    from p4fabric.fabric import tag_switch_interfaces

    with pytest.raises(FabricError, match="longer than 15"):
        tag_switch_interfaces(parse_topo_spec("fattree,4"), "averylongtag")


def test_run_tags_are_short_and_stable(tmp_path: Path) -> None:
    from p4fabric.cleanup import RunState

    tag = RunState("p4ina-123-456", tmp_path).tag
    assert tag == RunState("p4ina-123-456", tmp_path).tag and len(tag) == 3 and tag.startswith("p")
