"""Rank order keeps the ring inside a leaf before crossing the spine; the NCCL XML is well formed and complete."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from controller.exceptions import TopologyError
from controller.nccl_facts import from_sysfs
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
        net = n.find("system/cpu/nic/net")
        assert net is not None and net.get("guid")
    assert doc.find("ring").text == "h1 h2 h3"  # type: ignore[union-attr]
    assert {s.get("name") for s in doc.findall("tree/switch")} == set(tree.switches)
    one = ET.fromstring(nccl_system_xml(topo, "h2"))
    assert one.tag == "system" and one.find("cpu/nic/net").get("guid") == "0x2"  # type: ignore[union-attr]


def test_nccl_xml_invents_nothing_the_topology_does_not_say() -> None:
    """NCCL detects from sysfs what a topology file leaves out; an invented CPU, PCI bus id or speed would override
    the real one. Without facts: no PCI element, no CPU attributes, no speed, no interface name."""
    topo = leaf_spine(1, 1, 1)
    text = nccl_system_xml(topo, "h1")
    one = ET.fromstring(text)
    cpu = one.find("cpu")
    assert cpu is not None and dict(cpu.attrib) == {}
    assert one.find("cpu/pci") is None
    net = one.find("cpu/nic/net")
    assert net is not None and "speed" not in net.attrib and "name" not in net.attrib
    assert "left for NCCL to detect: numaid, busid, netdev, speed_mbps" in text


def test_nccl_xml_uses_the_facts_the_topology_gives() -> None:
    topo = leaf_spine(1, 1, 1)
    topo.hosts["h1"].nccl = {"netdev": "ens1f0", "numaid": 1, "busid": "0000:3B:00.0", "speed_mbps": 100000,
                             "vendor": "AuthenticAMD", "familyid": 25, "modelid": 1, "arch": "x86_64"}
    topo.validate()
    one = ET.fromstring(nccl_system_xml(topo, "h1"))
    cpu = one.find("cpu")
    assert cpu is not None and dict(cpu.attrib) == {"numaid": "1", "arch": "x86_64", "vendor": "AuthenticAMD",
                                                    "familyid": "25", "modelid": "1"}
    net = one.find("cpu/pci[@busid='0000:3b:00.0']/nic/net")
    assert net is not None and net.get("name") == "ens1f0" and net.get("speed") == "100000"


@pytest.mark.parametrize("facts, message", [
    ({"busid": "3b:00.0"}, "busid '3b:00.0' is malformed"),
    ({"numaid": -1}, "numaid must be an integer >= 0"),
    ({"speed_mbps": "fast"}, "bad nccl facts|speed_mbps"),
    ({"netdev": "eth0; rm -rf /"}, "netdev .* is malformed"),
    ({"gpu": 1}, "unknown nccl keys gpu"),
])
def test_bad_nccl_facts_are_refused(facts: dict[str, object], message: str) -> None:
    topo = leaf_spine(1, 1, 1)
    topo.hosts["h1"].nccl = facts
    with pytest.raises(TopologyError, match=message):
        topo.validate()


def test_facts_from_sysfs(tmp_path: Path) -> None:
    """A PCI NIC: bus id from the device link, NUMA node and speed from their files, CPU from /proc/cpuinfo. A
    virtual one (veth): no device link, speed unreadable, so neither is reported."""
    pci = tmp_path / "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.1"
    pci.mkdir(parents=True)
    (pci / "numa_node").write_text("1\n")
    net = tmp_path / "sys/class/net"
    (net / "ens2").mkdir(parents=True)
    (net / "ens2" / "device").symlink_to(pci)
    (net / "ens2" / "speed").write_text("25000\n")
    (net / "h1-eth0").mkdir()
    (net / "h1-eth0" / "speed").write_text("-1\n")
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                                           "model\t\t: 143\nmodel name\t: X\n")
    real = from_sysfs("ens2", tmp_path)
    assert (real.busid, real.numaid, real.speed_mbps) == ("0000:3b:00.1", 1, 25000)
    assert (real.vendor, real.familyid, real.modelid) == ("GenuineIntel", 6, 143)
    veth = from_sysfs("h1-eth0", tmp_path)
    assert (veth.busid, veth.numaid, veth.speed_mbps) == (None, None, None)
    with pytest.raises(TopologyError, match="no interface nope"):
        from_sysfs("nope", tmp_path)
