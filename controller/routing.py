"""Forwarding plans: for every switch, the equal-cost ports towards every host and every switch address.

Computed on the live graph (failed switches and links removed), so a failure changes the plan and the fabric
programmer rewrites only the entries that differ. The P4 program may spray per packet or hash per flow over the
port set; the plan only states which ports are equally short.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from controller.topology import Topology


@dataclass(frozen=True)
class Route:
    """How `switch` reaches `dest` (a host or another switch's own address)."""

    switch: str
    dest: str
    ip: str
    mac: str
    ports: tuple[int, ...]  # equal-cost egress ports, sorted; one port means no choice
    local: bool  # dest hangs off this switch directly (a host port): rewrite the destination MAC


def plan_routes(topo: Topology, *, down_switches: Iterable[str] = (),
                down_links: Iterable[tuple[str, str]] = ()) -> dict[str, list[Route]]:
    down = set(down_switches)
    g = topo.graph(include_hosts=False, down_switches=down, down_links=down_links)
    plan: dict[str, list[Route]] = {s: [] for s in g.nodes}
    dests: list[tuple[str, str, str, str, int | None]] = []  # (name, attach switch, ip, mac, host port)
    for h in topo.hosts.values():
        if h.switch in g and h.ip:
            dests.append((h.name, h.switch, h.ip, h.mac, h.port))
    for sw in sorted(g.nodes):
        ip, mac = topo.switch_address(sw)
        dests.append((sw, sw, ip, mac, None))
    for name, attach, ip, mac, host_port in dests:
        dist = nx.single_source_shortest_path_length(g, attach)
        for sw in sorted(g.nodes):
            if sw not in dist or (sw == attach and host_port is None):
                continue
            if sw == attach:
                assert host_port is not None
                plan[sw].append(Route(sw, name, ip, mac, (host_port,), True))
                continue
            ports = tuple(sorted(g.edges[sw, n]["ports"][sw] for n in g.neighbors(sw)
                                 if dist.get(n, -1) == dist[sw] - 1))
            plan[sw].append(Route(sw, name, ip, mac, ports, False))
    return plan
