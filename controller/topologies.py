"""The stock fabric shapes, defined once, as `Topology` objects: single switch, leaf-spine, fat-tree, dragonfly,
2-D/3-D torus, ring.

They carry the tree strategies' role hints (role, group, coord) and every host's MAC and IPv4 address. The Mininet
fabrics (`p4fabric.topos`) are built by walking these objects, so the emulated network and the controller's view
of it cannot disagree. Numbering is Mininet's: hosts h1.. in creation order (h1 = 10.0.0.1, 00:00:00:00:00:01);
switch ports from 1 per switch in the order its links are created (a switch's hosts first, as they are created with
it); a host's only port is 0. Names are the `p4ina run --topo` spec names (docs/running.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from controller.exceptions import TopologyError
from controller.topology import Topology


def host_addresses(index: int) -> tuple[str, str]:
    """(MAC, IPv4) of host number `index` (1-based)."""
    if not 1 <= index <= 0xFFFE:
        raise TopologyError(f"host index {index} out of range 1..65534")
    return f"00:00:00:00:{index >> 8:02x}:{index & 0xFF:02x}", f"10.0.{index >> 8}.{index & 0xFF}"


def _positive(name: str, value: int, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise TopologyError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


class _Builder:
    """A `Topology` under construction that numbers hosts and switch ports as Mininet's `Topo.addLink` does."""

    def __init__(self, name: str, kind: str) -> None:
        self.topo = Topology(name=name, kind=kind)
        self.used: dict[str, int] = {}
        self.host_count = 0

    def _port(self, switch: str) -> int:
        self.used[switch] = self.used.get(switch, 0) + 1
        return self.used[switch]

    def switch(self, name: str, role: str, group: int | None = None, coord: tuple[int, ...] | None = None) -> str:
        self.topo.add_switch(name, role=role, group=group, coord=coord)
        return name

    def hosts(self, switch: str, count: int) -> None:
        for _ in range(count):
            self.host_count += 1
            mac, ip = host_addresses(self.host_count)
            self.topo.add_host(f"h{self.host_count}", switch, self._port(switch), mac=mac, ip=ip)

    def link(self, a: str, b: str) -> None:
        self.topo.add_link(a, self._port(a), b, self._port(b))


def single(hosts: int = 2) -> Topology:
    """One switch `s1` with `hosts` hosts."""
    _positive("hosts", hosts)
    b = _Builder(f"single-{hosts}", "generic")
    b.hosts(b.switch("s1", role="leaf", group=0), hosts)
    return b.topo


def leaf_spine(leaves: int = 2, spines: int = 2, hosts_per_leaf: int = 2) -> Topology:
    """A two-tier Clos: every leaf links to every spine; hosts hang off the leaves."""
    _positive("leaves", leaves)
    _positive("spines", spines)
    _positive("hosts per leaf", hosts_per_leaf, 0)
    b = _Builder(f"leafspine-{leaves}x{spines}x{hosts_per_leaf}", "leaf-spine")
    spine_names = [b.switch(f"spine{s + 1}", role="spine") for s in range(spines)]
    leaf_names = []
    for leaf in range(leaves):
        leaf_names.append(b.switch(f"leaf{leaf + 1}", role="leaf", group=leaf))
        b.hosts(leaf_names[-1], hosts_per_leaf)
    for leaf_name in leaf_names:
        for spine in spine_names:
            b.link(leaf_name, spine)
    return b.topo


def fat_tree(k: int = 4) -> Topology:
    """The k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores,
    k^3/4 hosts. Aggregation switch i of every pod links to cores i*k/2 .. i*k/2 + k/2 - 1."""
    _positive("k", k, 2)
    if k % 2:
        raise TopologyError(f"fat-tree k must be even, got {k}")
    half = k // 2
    b = _Builder(f"fattree-k{k}", "fat-tree")
    cores = [b.switch(f"core{c + 1}", role="core") for c in range(half * half)]
    for pod in range(k):
        aggs = [b.switch(f"agg{pod}_{i}", role="agg", group=pod) for i in range(half)]
        edges = [b.switch(f"edge{pod}_{i}", role="edge", group=pod) for i in range(half)]
        for edge in edges:
            b.hosts(edge, half)
        for edge, agg in itertools.product(edges, aggs):
            b.link(edge, agg)
        for i, agg in enumerate(aggs):
            for core in cores[i * half:(i + 1) * half]:
                b.link(agg, core)
    return b.topo


def dragonfly(groups: int = 4, routers: int = 2, hosts_per_router: int = 1) -> Topology:
    """Dragonfly: the routers of a group are fully connected; one global link joins every pair of groups,
    spread round-robin over the routers of each group."""
    _positive("groups", groups)
    _positive("routers per group", routers)
    _positive("hosts per router", hosts_per_router, 0)
    b = _Builder(f"dragonfly-g{groups}a{routers}h{hosts_per_router}", "dragonfly")
    for g in range(groups):
        for r in range(routers):
            b.hosts(b.switch(f"r{g}_{r}", role="router", group=g), hosts_per_router)
    for g in range(groups):
        for r1, r2 in itertools.combinations(range(routers), 2):
            b.link(f"r{g}_{r1}", f"r{g}_{r2}")
    next_router = [0] * groups
    for g1, g2 in itertools.combinations(range(groups), 2):
        r1, r2 = next_router[g1] % routers, next_router[g2] % routers
        next_router[g1] += 1
        next_router[g2] += 1
        b.link(f"r{g1}_{r1}", f"r{g2}_{r2}")
    return b.topo


def torus(*dims: int, hosts_per_switch: int = 1) -> Topology:
    """A 2-D or 3-D torus (default 3 x 3): each switch links to its +1 neighbour in every dimension, wrapping
    around. A dimension of size 2 gets one link between the pair, not two parallel ones."""
    dims = dims or (3, 3)
    if len(dims) not in (2, 3):
        raise TopologyError(f"a torus has 2 or 3 dimensions, got {len(dims)}")
    for d in dims:
        _positive("torus dimension", d, 2)
    _positive("hosts per switch", hosts_per_switch, 0)
    b = _Builder("torus-" + "x".join(map(str, dims)), "torus")

    def name(coord: tuple[int, ...]) -> str:
        return "t" + "_".join(map(str, coord))

    coords = list(itertools.product(*(range(d) for d in dims)))
    for coord in coords:
        b.hosts(b.switch(name(coord), role="router", coord=coord), hosts_per_switch)
    seen: set[frozenset[str]] = set()
    for coord in coords:
        for axis, size in enumerate(dims):
            other = list(coord)
            other[axis] = (other[axis] + 1) % size
            pair = frozenset((name(coord), name(tuple(other))))
            if pair not in seen:
                seen.add(pair)
                b.link(name(coord), name(tuple(other)))
    return b.topo


def ring(switches: int = 4, hosts_per_switch: int = 1) -> Topology:
    """`switches` switches s1.. in a ring (2 switches make a single link)."""
    _positive("switches", switches, 2)
    _positive("hosts per switch", hosts_per_switch, 0)
    b = _Builder(f"ring-{switches}", "generic")
    names = [b.switch(f"s{i + 1}", role="router", coord=(i,)) for i in range(switches)]
    for name in names:
        b.hosts(name, hosts_per_switch)
    for i in range(switches if switches > 2 else 1):
        b.link(names[i], names[(i + 1) % switches])
    return b.topo


#: The `p4ina run --topo NAME,ARG,...` (and `mn --topo`) names of the stock shapes.
BUILDERS: dict[str, Callable[..., Topology]] = {
    "single": single,
    "leafspine": leaf_spine,
    "fattree": fat_tree,
    "dragonfly": dragonfly,
    "torus": torus,
    "ring": ring,
}
