"""Topology-aware rank order and NCCL topology XML for a job.

Rank order walks the job's reduction tree depth first, children in name order, so members under one leaf get
consecutive ranks and leaves under one aggregation switch follow each other: a ring over the ranks crosses each
uplink as few times as the tree allows (once per leaf in each direction, not once per member).

NCCL only reads per-node topology (`NCCL_TOPO_FILE`: a `<system version="1">` tree of CPUs, PCI devices and
NICs); it has no element for the switches between nodes. `nccl_topology_xml` therefore writes one document per
job that holds each member's `<system>` (its NIC and the speed of its link into the fabric) under a `<node>` that
also records rank, switch and port, followed by the ring order and the tree. `nccl_system_xml` gives the bare
`<system>` of one host, the file to point `NCCL_TOPO_FILE` at.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib

from controller.encoding import parse_value
from controller.exceptions import JobError
from controller.nccl_facts import NicFacts, from_mapping
from controller.topology import Topology
from controller.trees import ReductionTree


def rank_order(tree: ReductionTree) -> list[str]:
    """Members in ring order: depth-first over the tree, hosts of a switch before its child switches' hosts."""
    order: list[str] = []

    def walk(sw: str) -> None:
        order.extend(h for h in tree.child_hosts(sw) if h in tree.members)
        for child in tree.child_switches(sw):
            walk(child)

    walk(tree.root)
    missing = [m for m in tree.members if m not in order]
    if missing:
        raise JobError(f"tree does not reach members {', '.join(missing)}")
    return order


def uplink_crossings(topo: Topology, order: list[str]) -> int:
    """How many consecutive pairs of the ring (including the wrap) sit on different switches."""
    if len(order) < 2:
        return 0
    sw = [topo.hosts[h].switch for h in order]
    return sum(1 for i in range(len(sw)) if sw[i] != sw[(i + 1) % len(sw)])


def _system_element(topo: Topology, host: str, facts: NicFacts | None = None) -> ET.Element:
    """One host's `<system>`: only what the topology file (or `facts`, e.g. read from /sys) says; NCCL reads what is
    left out from the host's own sysfs, so nothing here is guessed (no invented CPU, PCI bus id or link speed)."""
    h = topo.hosts[host]
    known = facts if facts is not None else from_mapping(h.nccl, f"host {host}")
    guid = parse_value(h.mac, 48) if h.mac else zlib.crc32(host.encode())
    system = ET.Element("system", version="1")
    parent = ET.SubElement(system, "cpu", known.cpu_attrs())
    if known.busid is not None:
        parent = ET.SubElement(parent, "pci", busid=known.busid)
    nic = ET.SubElement(parent, "nic")
    net = {"dev": "0", "port": "1", "guid": f"0x{guid:x}"}
    if known.netdev is not None:
        net["name"] = known.netdev
    if known.speed_mbps is not None:
        net["speed"] = str(known.speed_mbps)
    ET.SubElement(nic, "net", net)
    missing = [k for k, v in (("numaid", known.numaid), ("busid", known.busid), ("netdev", known.netdev),
                              ("speed_mbps", known.speed_mbps)) if v is None]
    if missing:
        system.insert(0, ET.Comment(f" unknown, left for NCCL to detect: {', '.join(missing)} "))
    return system


def nccl_system_xml(topo: Topology, host: str, facts: NicFacts | None = None) -> str:
    """The `<system>` of one host, the file to point its `NCCL_TOPO_FILE` at."""
    if host not in topo.hosts:
        raise JobError(f"unknown host {host!r}")
    el = _system_element(topo, host, facts)
    ET.indent(el)
    return ET.tostring(el, encoding="unicode") + "\n"


def nccl_topology_xml(topo: Topology, tree: ReductionTree, job_id: int, order: list[str] | None = None) -> str:
    order = order or rank_order(tree)
    root = ET.Element("p4ina_job", id=str(job_id), ranks=str(len(order)), fabric=topo.name, kind=topo.kind)
    root.append(ET.Comment(" each <system> is one node's NCCL_TOPO_FILE; <ring> is the rank order to launch with "))
    for rank, host in enumerate(order):
        h = topo.hosts[host]
        node = ET.SubElement(root, "node", host=host, rank=str(rank), switch=h.switch, port=str(h.port),
                             ip=h.ip, mac=h.mac)
        node.append(_system_element(topo, host))
    ring = ET.SubElement(root, "ring", crossings=str(uplink_crossings(topo, order)))
    ring.text = " ".join(order)
    tree_el = ET.SubElement(root, "tree", root=tree.root, depth=str(tree.depth))
    for sw in tree.switches:
        parent = tree.parent[sw]
        attrs = {"name": sw, "role": tree.role(sw), "level": str(tree.level(sw))}
        if parent is not None:
            attrs["parent"] = parent
        ET.SubElement(tree_el, "switch", attrs)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
