"""Stock fabrics in Mininet's idiom: each is a `Topo` whose `build()` adds switches, hosts and links.

The shapes themselves are defined once, in `controller.topologies`, as the controller's `Topology` objects; a
`FabricTopo` walks one (`add_model`), so switch names, role hints (`role`, `group`, `coord`), host MAC/IPv4
addresses (h1 = 10.0.0.1, 00:00:00:00:00:01) and port numbers are the controller's by construction, and the
topology file written for the controller (`topofile`) agrees with the Mininet hosts. Link options (`bw`, `delay`,
`loss`, ...) come from `lopts` as in Mininet; `P4Link` turns the ones this kernel cannot do with tc into
switch-port impairments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from mininet.topo import Topo

from controller import topologies
from controller.exceptions import TopologyError
from p4fabric.exceptions import TopologySpecError

if TYPE_CHECKING:
    from controller.topology import Topology

#: The prefix length all hosts share: one L2/L3 domain whose forwarding the controller installs.
HOST_PREFIX_LEN = 16


def host_addresses(index: int) -> tuple[str, str]:
    """(MAC, IPv4) of host number `index` (1-based): `controller.topologies.host_addresses`."""
    try:
        return topologies.host_addresses(index)
    except TopologyError as exc:
        raise TopologySpecError(str(exc)) from None


class FabricTopo(Topo):
    """Base class: a Mininet topology built from a controller `Topology` (the subclass's `shape`, called with the
    `--topo` arguments), with the `title` and `kind` (`generic`, `leaf-spine`, `fat-tree`, `dragonfly`, `torus`)
    the controller's topology file takes from it."""

    kind = "generic"
    shape: ClassVar[Callable[..., Topology] | None] = None

    def __init__(self, *args: Any, **params: Any) -> None:
        self.host_count = 0
        self.title = type(self).__name__
        super().__init__(*args, **params)

    def build(self, *args: Any, **params: Any) -> None:
        if type(self).shape is None:
            return
        try:
            model = type(self).shape(*args, **params)  # type: ignore[misc]
        except TopologyError as exc:
            raise TopologySpecError(str(exc)) from None
        self.add_model(model)

    def add_model(self, model: Topology) -> None:
        """Adds `model`'s switches (with their role hints), its hosts (same MAC, IPv4 in the shared /16, on port
        0) and its links, each end on the port the model gives it."""
        self.title, self.kind = model.name, model.kind
        for sw in model.switches.values():
            opts: dict[str, Any] = {"role": sw.role}
            if sw.group is not None:
                opts["group"] = sw.group
            if sw.coord is not None:
                opts["coord"] = tuple(sw.coord)
            self.addSwitch(sw.name, **opts)
        for host in model.hosts.values():
            self.addHost(host.name, mac=host.mac, ip=f"{host.ip}/{HOST_PREFIX_LEN}")
            self.addLink(host.name, host.switch, port1=0, port2=host.port)
            self.host_count += 1
        for link in model.links:
            self.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port)

    def switch_info(self, name: str) -> dict[str, Any]:
        return dict(self.nodeInfo(name))


class SingleTopo(FabricTopo):
    """One switch `s1` with `hosts` hosts: `single,HOSTS`."""

    shape = staticmethod(topologies.single)


class LeafSpineTopo(FabricTopo):
    """A two-tier Clos: `leafspine,LEAVES,SPINES,HOSTS_PER_LEAF`."""

    kind = "leaf-spine"
    shape = staticmethod(topologies.leaf_spine)


class FatTreeTopo(FabricTopo):
    """The k-ary fat-tree: `fattree,K`."""

    kind = "fat-tree"
    shape = staticmethod(topologies.fat_tree)


class DragonflyTopo(FabricTopo):
    """Dragonfly: `dragonfly,GROUPS,ROUTERS,HOSTS_PER_ROUTER`."""

    kind = "dragonfly"
    shape = staticmethod(topologies.dragonfly)


class TorusTopo(FabricTopo):
    """A 2-D or 3-D torus: `torus,X,Y[,Z][,hosts_per_switch=H]`."""

    kind = "torus"
    shape = staticmethod(topologies.torus)


class RingTopo(FabricTopo):
    """Switches in a ring: `ring,SWITCHES,HOSTS_PER_SWITCH`."""

    shape = staticmethod(topologies.ring)


#: `mn --topo NAME,ARG,...` and `p4ina run --topo NAME,ARG,...` names.
TOPOS: dict[str, Callable[..., FabricTopo]] = {
    "single": SingleTopo,
    "leafspine": LeafSpineTopo,
    "fattree": FatTreeTopo,
    "dragonfly": DragonflyTopo,
    "torus": TorusTopo,
    "ring": RingTopo,
}


def _ocs_leafspine(*args: Any, **params: Any) -> FabricTopo:
    """`ocs-leafspine,L,S,H[,SPARES][,ocs_ms=MS]`: leaf uplinks through an optical circuit switch (p4fabric.ocsfabric,
    imported here on use: it builds on this module)."""
    from p4fabric.ocsfabric import OcsLeafSpineTopo

    return OcsLeafSpineTopo(*args, **params)


TOPOS["ocs-leafspine"] = _ocs_leafspine

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
