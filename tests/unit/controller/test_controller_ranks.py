"""Rank order keeps the ring inside a leaf before crossing the spine; the NCCL XML is well formed and complete."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

from controller.ranks import nccl_system_xml, nccl_topology_xml, rank_order, uplink_crossings
from controller.topologies import fat_tree, leaf_spine
from controller.trees import compute_tree


def test_ranks_group_by_leaf_whatever_the_member_order() -> None:
    topo = leaf_spine(4, 2, 4)
    members = sorted(topo.hosts)
    random.Random(3).shuffle(members)
    tree = compute_tree(topo, members)
    order = rank_order(tree)
    assert sorted(order) == sorted(members)
    leaves = [topo.hosts[h].switch for h in order]
    # each leaf's members are contiguous: the ring crosses the spine once per leaf
    assert uplink_crossings(topo, order) == 4
    assert uplink_crossings(topo, members) > 4
    assert len({leaf for i, leaf in enumerate(leaves) if i == 0 or leaves[i - 1] != leaf}) == 4


def test_fat_tree_ranks_stay_in_the_pod_before_the_core() -> None:
    topo = fat_tree(4)
    members = [f"h{i}" for i in (1, 9, 3, 11, 2, 10, 4, 12)]
    order = rank_order(compute_tree(topo, members))
    pods = [topo.switches[topo.hosts[h].switch].group for h in order]
    changes = sum(1 for i in range(len(pods)) if pods[i] != pods[i - 1])
    assert changes == 2  # two pods: cross the core once each way around the ring


def test_nccl_topology_xml() -> None:
    topo = leaf_spine(2, 1, 2)
    tree = compute_tree(topo, ["h3", "h1", "h2"])
    doc = ET.fromstring(nccl_topology_xml(topo, tree, 5).split("\n", 1)[1])
    assert doc.tag == "p4ina_job" and doc.get("id") == "5" and doc.get("ranks") == "3"
    nodes = doc.findall("node")
    assert [(n.get("host"), n.get("rank")) for n in nodes] == [("h1", "0"), ("h2", "1"), ("h3", "2")]
    for n in nodes:
        system = n.find("system")
        assert system is not None and system.get("version") == "1"
        net = n.find("system/cpu/pci/nic/net")
        assert net is not None and net.get("name") == f"{n.get('host')}-eth0" and net.get("speed")
    assert doc.find("ring").text == "h1 h2 h3"  # type: ignore[union-attr]
    assert {s.get("name") for s in doc.findall("tree/switch")} == set(tree.switches)
    one = ET.fromstring(nccl_system_xml(topo, "h2"))
    assert one.tag == "system" and one.find("cpu/pci/nic/net").get("guid") == "0x2"  # type: ignore[union-attr]
