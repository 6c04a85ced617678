"""The topology file: round trip, derived port maps, and one-line errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from controller.exceptions import TopologyError
from controller.topologies import BUILDERS, dragonfly, fat_tree, leaf_spine, torus
from controller.topology import Topology


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_round_trip(kind: str, tmp_path: Path) -> None:
    topo = BUILDERS[kind]()
    topo.switches[sorted(topo.switches)[0]].grpc = "127.0.0.1:50001"
    path = tmp_path / "fabric.yaml"
    topo.save(path)
    again = Topology.load(path)
    assert again.to_dict() == topo.to_dict()
    assert again == topo


def test_shapes() -> None:
    ft = fat_tree(4)
    assert (len(ft.switches), len(ft.hosts), len(ft.links)) == (20, 16, 32)
    ls = leaf_spine(4, 2, 2)
    assert (len(ls.switches), len(ls.hosts), len(ls.links)) == (6, 8, 8)
    df = dragonfly(5, 2, 2)
    assert len(df.links) == 5 * 1 + 10  # one local link per group, one global per group pair
    tor = torus(4, 4)
    assert all(tor.graph(include_hosts=False).degree(s) == 4 for s in tor.switches)


def test_ports_and_graph_view() -> None:
    topo = leaf_spine(2, 1, 1)
    assert topo.ports("leaf1") == {1: "h1", 2: "spine1"}
    assert topo.port_towards("spine1", "leaf2") == 2
    g = topo.graph()
    assert g.nodes["h1"]["kind"] == "host" and g.nodes["leaf1"]["kind"] == "switch"
    assert g.edges["leaf1", "spine1"]["ports"] == {"leaf1": 2, "spine1": 1}
    assert "leaf1" not in topo.graph(down_switches=["leaf1"])


def test_hand_written_file(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("""
name: lab
kind: leaf-spine
switches:
  - {name: s1, grpc: "10.0.0.1:9559", device_id: 1, role: leaf}
  - {name: s2, grpc: "10.0.0.2:9559", role: spine, ip: 10.9.9.2, mac: "02:00:00:00:00:02"}
hosts:
  - {name: a, switch: s1, port: 1, ip: 10.1.0.1, mac: "00:00:00:00:01:01"}
links:
  - [s1, 2, s2, 1]
""")
    topo = Topology.load(path)
    assert topo.switches["s1"].device_id == 1
    assert topo.ports("s1") == {1: "a", 2: "s2"}
    assert topo.switch_address("s2") == ("10.9.9.2", "02:00:00:00:00:02")
    assert topo.switch_address("s1")[0].startswith("10.255.")


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2", "not valid YAML"),
    ("- a\n- b\n", "expected a mapping"),
    ("kind: ring\n", "unknown topology kind 'ring'"),
    ("switches: [{name: s1}]\nhosts: [{name: h, switch: s9, port: 1}]\n", "unknown switch 's9'"),
    ("switches: [{name: s1}, {name: s2}]\nhosts: [{name: h, switch: s1, port: 1}]\nlinks: [[s1, 1, s2, 1]]\n",
     "port s1:1 used by both host h and link s1-s2"),
    ("switches: [{name: s1, colour: red}]\n", "bad entry"),
    ("switches: [{name: s1}, {name: s1}]\n", "duplicate node name 's1'"),
    ("switches: [{name: s1, ports: {1: x}}]\n", "declares ports"),
    ("switches: [{name: s1, grpc: 'a:1'}, {name: s2, grpc: 'a:1'}]\n", "share gRPC address"),
])
def test_bad_files_give_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(TopologyError, match=message) as info:
        Topology.load(path)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TopologyError, match="cannot read topology"):
        Topology.load(tmp_path / "nope.yaml")


def test_saved_file_is_readable_yaml(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    leaf_spine(2, 1, 1).save(path)
    data = yaml.safe_load(path.read_text())
    assert data["switches"][1]["ports"] == {1: "leaf1", 2: "leaf2"} or data["switches"][0]["role"] == "spine"


def test_tls_settings_round_trip_with_paths_relative_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("""
tls: {ca: pki/ca.pem, cert: pki/controller.pem, key: /abs/controller.key, server_name: fabric.local}
switches: [{name: s1, grpc: "10.0.0.1:9559"}]
""")
    topo = Topology.load(path)
    assert topo.tls is not None
    assert topo.tls.ca == str(tmp_path / "pki" / "ca.pem") and topo.tls.key == "/abs/controller.key"
    assert topo.tls.server_name == "fabric.local"
    topo.save(tmp_path / "again.yaml")
    assert Topology.load(tmp_path / "again.yaml").tls == topo.tls
    path.write_text("tls: {ca: a.pem, colour: red}\n")
    with pytest.raises(TopologyError, match="bad entry"):
        Topology.load(path)
