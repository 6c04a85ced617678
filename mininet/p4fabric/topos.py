"""Stock fabrics in Mininet's idiom: each is a `Topo` whose `build()` adds switches, hosts and links.

Every switch carries role hints (`role`, `group`, `coord`) that the controller's tree strategies use; every host
gets a deterministic MAC and IPv4 address from its index (h1 = 10.0.0.1, 00:00:00:00:00:01), so that the
topology file written for the controller and the Mininet hosts agree. Link options (`bw`, `delay`, `loss`, ...)
come from `lopts` as in Mininet; `P4Link` turns the ones this kernel cannot do with tc into switch-port impairments.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from mininet.topo import Topo

from p4fabric.exceptions import TopologySpecError

#: The prefix length all hosts share: one L2/L3 domain whose forwarding the controller installs.
HOST_PREFIX_LEN = 16


def host_addresses(index: int) -> tuple[str, str]:
    """(MAC, IPv4) of host number `index` (1-based)."""
    if not 1 <= index <= 0xFFFE:
        raise TopologySpecError(f"host index {index} out of range 1..65534")
    return f"00:00:00:00:{index >> 8:02x}:{index & 0xFF:02x}", f"10.0.{index >> 8}.{index & 0xFF}"


class FabricTopo(Topo):
    """Base class: hosts numbered h1.. with their addresses, switches with role hints, and a `kind` for the
    controller's topology file (`generic`, `leaf-spine`, `fat-tree`, `dragonfly`, `torus`)."""

    kind = "generic"

    def __init__(self, *args: Any, **params: Any) -> None:
        self.host_count = 0
        self.title = type(self).__name__
        super().__init__(*args, **params)

    def add_fabric_switch(self, name: str, role: str = "", group: int | None = None,
                          coord: tuple[int, ...] | None = None) -> str:
        opts: dict[str, Any] = {"role": role}
        if group is not None:
            opts["group"] = group
        if coord is not None:
            opts["coord"] = coord
        return str(self.addSwitch(name, **opts))

    def add_fabric_hosts(self, switch: str, count: int) -> list[str]:
        names = []
        for _ in range(count):
            self.host_count += 1
            mac, ip = host_addresses(self.host_count)
            name = str(self.addHost(f"h{self.host_count}", mac=mac, ip=f"{ip}/{HOST_PREFIX_LEN}"))
            self.addLink(name, switch)
            names.append(name)
        return names

    def switch_info(self, name: str) -> dict[str, Any]:
        return dict(self.nodeInfo(name))


def _positive(name: str, value: int, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise TopologySpecError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


class SingleTopo(FabricTopo):
    """One switch `s1` with `hosts` hosts."""

    def build(self, hosts: int = 2) -> None:
        _positive("hosts", hosts)
        self.title = f"single-{hosts}"
        self.add_fabric_hosts(self.add_fabric_switch("s1", role="leaf", group=0), hosts)


class LeafSpineTopo(FabricTopo):
    """A two-tier Clos: every leaf links to every spine; hosts hang off the leaves."""

    kind = "leaf-spine"

    def build(self, leaves: int = 2, spines: int = 2, hosts_per_leaf: int = 2) -> None:
        _positive("leaves", leaves)
        _positive("spines", spines)
        _positive("hosts per leaf", hosts_per_leaf, 0)
        self.title = f"leafspine-{leaves}x{spines}x{hosts_per_leaf}"
        spine_names = [self.add_fabric_switch(f"spine{s + 1}", role="spine") for s in range(spines)]
        for leaf in range(leaves):
            name = self.add_fabric_switch(f"leaf{leaf + 1}", role="leaf", group=leaf)
            self.add_fabric_hosts(name, hosts_per_leaf)
        for leaf in range(leaves):
            for spine in spine_names:
                self.addLink(f"leaf{leaf + 1}", spine)


class FatTreeTopo(FabricTopo):
    """The k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores,
    k^3/4 hosts. Aggregation switch i of every pod links to cores i*k/2 .. i*k/2 + k/2 - 1."""

    kind = "fat-tree"

    def build(self, k: int = 4) -> None:
        _positive("k", k, 2)
        if k % 2:
            raise TopologySpecError(f"fat-tree k must be even, got {k}")
        half = k // 2
        self.title = f"fattree-k{k}"
        cores = [self.add_fabric_switch(f"core{c + 1}", role="core") for c in range(half * half)]
        for pod in range(k):
            aggs = [self.add_fabric_switch(f"agg{pod}_{i}", role="agg", group=pod) for i in range(half)]
            edges = [self.add_fabric_switch(f"edge{pod}_{i}", role="edge", group=pod) for i in range(half)]
            for edge in edges:
                self.add_fabric_hosts(edge, half)
            for edge, agg in itertools.product(edges, aggs):
                self.addLink(edge, agg)
            for i, agg in enumerate(aggs):
                for core in cores[i * half:(i + 1) * half]:
                    self.addLink(agg, core)


class DragonflyTopo(FabricTopo):
    """Dragonfly: the routers of a group are fully connected; one global link joins every pair of groups,
    spread round-robin over the routers of each group."""

    kind = "dragonfly"

    def build(self, groups: int = 4, routers: int = 2, hosts_per_router: int = 1) -> None:
        _positive("groups", groups)
        _positive("routers per group", routers)
        _positive("hosts per router", hosts_per_router, 0)
        self.title = f"dragonfly-g{groups}a{routers}h{hosts_per_router}"
        for g in range(groups):
            for r in range(routers):
                self.add_fabric_hosts(self.add_fabric_switch(f"r{g}_{r}", role="router", group=g),
                                      hosts_per_router)
        for g in range(groups):
            for a, b in itertools.combinations(range(routers), 2):
                self.addLink(f"r{g}_{a}", f"r{g}_{b}")
        next_router = [0] * groups
        for g1, g2 in itertools.combinations(range(groups), 2):
            r1, r2 = next_router[g1] % routers, next_router[g2] % routers
            next_router[g1] += 1
            next_router[g2] += 1
            self.addLink(f"r{g1}_{r1}", f"r{g2}_{r2}")


class TorusTopo(FabricTopo):
    """A 2-D or 3-D torus: each switch links to its +1 neighbour in every dimension, wrapping around. A dimension
    of size 2 gets one link between the pair, not two parallel ones."""

    kind = "torus"

    def build(self, *dims: int, hosts_per_switch: int = 1) -> None:
        dims = dims or (3, 3)
        if len(dims) not in (2, 3):
            raise TopologySpecError(f"a torus has 2 or 3 dimensions, got {len(dims)}")
        for d in dims:
            _positive("torus dimension", d, 2)
        _positive("hosts per switch", hosts_per_switch, 0)
        self.title = "torus-" + "x".join(map(str, dims))

        def name(coord: tuple[int, ...]) -> str:
            return "t" + "_".join(map(str, coord))

        coords = list(itertools.product(*(range(d) for d in dims)))
        for coord in coords:
            self.add_fabric_hosts(self.add_fabric_switch(name(coord), role="router", coord=coord),
                                  hosts_per_switch)
        seen: set[frozenset[str]] = set()
        for coord in coords:
            for axis, size in enumerate(dims):
                other = list(coord)
                other[axis] = (other[axis] + 1) % size
                pair = frozenset((name(coord), name(tuple(other))))
                if pair not in seen:
                    seen.add(pair)
                    self.addLink(name(coord), name(tuple(other)))


class RingTopo(FabricTopo):
    """`switches` switches in a ring (2 switches make a single link)."""

    def build(self, switches: int = 4, hosts_per_switch: int = 1) -> None:
        _positive("switches", switches, 2)
        _positive("hosts per switch", hosts_per_switch, 0)
        self.title = f"ring-{switches}"
        names = [self.add_fabric_switch(f"s{i + 1}", role="router", coord=(i,)) for i in range(switches)]
        for name in names:
            self.add_fabric_hosts(name, hosts_per_switch)
        for i in range(switches if switches > 2 else 1):
            self.addLink(names[i], names[(i + 1) % switches])


#: `mn --topo NAME,ARG,...` and `p4ina run --topo NAME,ARG,...` names.
TOPOS: dict[str, Callable[..., FabricTopo]] = {
    "single": SingleTopo,
    "leafspine": LeafSpineTopo,
    "fattree": FatTreeTopo,
    "dragonfly": DragonflyTopo,
    "torus": TorusTopo,
    "ring": RingTopo,
}

_ALIASES = {"leaf-spine": "leafspine", "fat-tree": "fattree", "fat_tree": "fattree", "leaf_spine": "leafspine"}


def parse_topo_spec(spec: str, **params: Any) -> FabricTopo:
    """Build a topology from `NAME,ARG,...,KEY=VALUE` (Mininet's `--topo` syntax), e.g. `leafspine,2,2,2`."""
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if not parts:
        raise TopologySpecError("empty topology specification")
    name = _ALIASES.get(parts[0].lower(), parts[0].lower())
    if name not in TOPOS:
        raise TopologySpecError(f"unknown topology {parts[0]!r}; choose one of {', '.join(TOPOS)}")
    args: list[int] = []
    kwargs: dict[str, Any] = {}
    for part in parts[1:]:
        key, sep, value = part.partition("=")
        try:
            if sep:
                kwargs[key] = int(value)
            else:
                args.append(int(part))
        except ValueError:
            raise TopologySpecError(f"{spec}: {part!r} is not an integer") from None
    try:
        return TOPOS[name](*args, **kwargs, **params)
    except TypeError as exc:
        raise TopologySpecError(f"{spec}: {exc}") from None
