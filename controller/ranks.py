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
from controller.topology import Topology
from controller.trees import ReductionTree

DEFAULT_SPEED_MBPS = 10000.0


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


def _host_speed(topo: Topology, host: str) -> float:
    # a host's own link is not in `links`; the fabric's links tell the typical speed when given
    speeds = [lk.bandwidth_mbps for lk in topo.links if lk.bandwidth_mbps]
    return float(speeds[0]) if speeds else DEFAULT_SPEED_MBPS


def _system_element(topo: Topology, host: str) -> ET.Element:
    h = topo.hosts[host]
    guid = parse_value(h.mac, 48) if h.mac else zlib.crc32(host.encode())
    system = ET.Element("system", version="1")
    cpu = ET.SubElement(system, "cpu", numaid="0", affinity="ffffffff", arch="x86_64", vendor="GenuineIntel",
                        familyid="6", modelid="85")
    pci = ET.SubElement(cpu, "pci", {"busid": "0000:00:03.0", "class": "0x020000", "vendor": "0x0000",
                                     "device": "0x0000", "subsystem_vendor": "0x0000", "subsystem_device": "0x0000",
                                     "link_speed": "16.0 GT/s PCIe", "link_width": "16"})
    nic = ET.SubElement(pci, "nic")
    ET.SubElement(nic, "net", name=f"{host}-eth0", dev="0", speed=f"{_host_speed(topo, host):g}", port="1",
                  latency="0.000000", guid=f"0x{guid:x}", maxconn="65536", gdr="0")
    return system


def nccl_system_xml(topo: Topology, host: str) -> str:
    if host not in topo.hosts:
        raise JobError(f"unknown host {host!r}")
    el = _system_element(topo, host)
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
