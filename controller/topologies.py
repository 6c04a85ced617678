"""Stock fabric shapes as `Topology` objects: leaf-spine, fat-tree, dragonfly, 2-D torus.

They give the tree strategies their role hints (role, group, coord) and serve tests, examples and the Mininet
runner, which can fill in gRPC addresses and save the result as the topology file. Ports are numbered from 1 per
switch: hosts first, then links in the order they are created.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from controller.exceptions import TopologyError
from controller.topology import Topology


class _PortCounter:
    def __init__(self) -> None:
        self.next: dict[str, int] = {}

    def __call__(self, switch: str) -> int:
        port = self.next.get(switch, 1)
        self.next[switch] = port + 1
        return port


def _add_hosts(topo: Topology, switch: str, count: int, ports: _PortCounter, first_index: int) -> int:
    index = first_index
    for _ in range(count):
        index += 1
        topo.add_host(f"h{index}", switch, ports(switch), mac=f"00:00:00:00:{index >> 8:02x}:{index & 0xFF:02x}",
                      ip=f"10.0.{index >> 8}.{index & 0xFF}")
    return index


def _link(topo: Topology, a: str, b: str, ports: _PortCounter) -> None:
    topo.add_link(a, ports(a), b, ports(b))


def leaf_spine(leaves: int = 4, spines: int = 2, hosts_per_leaf: int = 2) -> Topology:
    if leaves < 1 or spines < 1 or hosts_per_leaf < 0:
        raise TopologyError("leaf-spine needs at least one leaf and one spine")
    topo = Topology(name=f"leafspine-{leaves}x{spines}", kind="leaf-spine")
    ports = _PortCounter()
    for s in range(spines):
        topo.add_switch(f"spine{s + 1}", role="spine")
    hosts = 0
    for leaf in range(leaves):
        name = f"leaf{leaf + 1}"
        topo.add_switch(name, role="leaf", group=leaf)
        hosts = _add_hosts(topo, name, hosts_per_leaf, ports, hosts)
    for leaf in range(leaves):
        for s in range(spines):
            _link(topo, f"leaf{leaf + 1}", f"spine{s + 1}", ports)
    return topo


def fat_tree(k: int = 4) -> Topology:
    """The k-ary fat-tree of Al-Fares et al.: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores."""
    if k < 2 or k % 2:
        raise TopologyError(f"fat-tree k must be even and >= 2, got {k}")
    half = k // 2
    topo = Topology(name=f"fattree-k{k}", kind="fat-tree")
    ports = _PortCounter()
    for c in range(half * half):
        topo.add_switch(f"core{c + 1}", role="core")
    hosts = 0
    for pod in range(k):
        for i in range(half):
            topo.add_switch(f"agg{pod}_{i}", role="agg", group=pod)
        for i in range(half):
            edge = f"edge{pod}_{i}"
            topo.add_switch(edge, role="edge", group=pod)
            hosts = _add_hosts(topo, edge, half, ports, hosts)
    for pod in range(k):
        for e, a in itertools.product(range(half), range(half)):
            _link(topo, f"edge{pod}_{e}", f"agg{pod}_{a}", ports)
        for a in range(half):
            for j in range(half):
                _link(topo, f"agg{pod}_{a}", f"core{a * half + j + 1}", ports)
    return topo


def dragonfly(groups: int = 5, routers: int = 2, hosts_per_router: int = 2) -> Topology:
    """Dragonfly: routers of a group fully connected; one global link between every pair of groups, spread
    round-robin over the routers of each group."""
    if groups < 1 or routers < 1:
        raise TopologyError("dragonfly needs at least one group and one router per group")
    topo = Topology(name=f"dragonfly-g{groups}a{routers}", kind="dragonfly")
    ports = _PortCounter()
    hosts = 0
    for g in range(groups):
        for r in range(routers):
            name = f"r{g}_{r}"
            topo.add_switch(name, role="router", group=g)
            hosts = _add_hosts(topo, name, hosts_per_router, ports, hosts)
    for g in range(groups):
        for a, b in itertools.combinations(range(routers), 2):
            _link(topo, f"r{g}_{a}", f"r{g}_{b}", ports)
    next_router = [0] * groups
    for g1, g2 in itertools.combinations(range(groups), 2):
        r1, r2 = next_router[g1] % routers, next_router[g2] % routers
        next_router[g1] += 1
        next_router[g2] += 1
        _link(topo, f"r{g1}_{r1}", f"r{g2}_{r2}", ports)
    return topo


def torus2d(rows: int = 4, cols: int = 4, hosts_per_switch: int = 1) -> Topology:
    """A rows x cols 2-D torus (wrap-around links; a dimension of 2 gets one link, not two parallel ones)."""
    if rows < 2 or cols < 2:
        raise TopologyError("a 2-D torus needs at least 2 x 2 switches")
    topo = Topology(name=f"torus-{rows}x{cols}", kind="torus")
    ports = _PortCounter()
    hosts = 0
    for r, c in itertools.product(range(rows), range(cols)):
        name = f"t{r}_{c}"
        topo.add_switch(name, role="router", coord=(r, c))
        hosts = _add_hosts(topo, name, hosts_per_switch, ports, hosts)
    seen: set[frozenset[str]] = set()
    for r, c in itertools.product(range(rows), range(cols)):
        for dr, dc in ((0, 1), (1, 0)):
            a, b = f"t{r}_{c}", f"t{(r + dr) % rows}_{(c + dc) % cols}"
            if frozenset((a, b)) not in seen:
                seen.add(frozenset((a, b)))
                _link(topo, a, b, ports)
    return topo


BUILDERS: dict[str, Callable[..., Topology]] = {"leaf-spine": leaf_spine, "fat-tree": fat_tree, "dragonfly": dragonfly, "torus": torus2d}
