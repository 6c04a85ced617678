"""The OCS leaf-spine fabric: every leaf uplink goes through one optical circuit switch (`ocs1`) to a spine, and
spare spines sit on OCS ports with no circuit (`ocs-leafspine,LEAVES,SPINES,HOSTS_PER_LEAF[,SPARES][,ocs_ms=MS]`).

The controller sees the plain `leafspine,LEAVES,SPINES,HOSTS_PER_LEAF` fabric (`controller.topologies.leaf_spine`):
same names, same ports, leaf-spine links. The OCS and the spares are physical facts below it, so the topology file
leaves them out (`hidden_from_controller`, `logical_links`). A spare patched in for a dead spine gets the same
circuits, so the leaves' ports do not change and the spare takes the spine's place under its name.

OCS port numbering (`OcsLayout`): leaf uplinks first (leaf i's uplink to spine j: (i-1)*S + j), then spine ports
(spine j's port to leaf i: L*S + (j-1)*L + i), then spare ports (spare p's port i: L*S + S*L + (p-1)*L + i). A spine
or spare's own port to leaf i is port i, as in `leaf_spine`; leaf i's uplink to spine j is its port H + j.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller import topologies
from controller.exceptions import TopologyError
from p4fabric.exceptions import FabricError, TopologySpecError
from p4fabric.ocs import Circuit, OcsSwitch, normal
from p4fabric.topos import HOST_PREFIX_LEN, FabricTopo

OCS_NAME = "ocs1"
DEFAULT_RECONFIG_MS = 50


@dataclass(frozen=True)
class OcsLayout:
    """Port arithmetic of an OCS leaf-spine fabric (1-based leaf, spine and spare indices)."""

    leaves: int
    spines: int
    hosts_per_leaf: int
    spares: int = 1

    def __post_init__(self) -> None:
        for name, value, low in (("leaves", self.leaves, 1), ("spines", self.spines, 1),
                                 ("hosts per leaf", self.hosts_per_leaf, 0), ("spares", self.spares, 0)):
            if not isinstance(value, int) or value < low:
                raise TopologySpecError(f"ocs-leafspine: {name} must be an integer >= {low}, got {value!r}")

    def leaf_port(self, leaf: int, spine: int) -> int:
        """OCS port of leaf `leaf`'s uplink to spine slot `spine`."""
        return (leaf - 1) * self.spines + spine

    def spine_port(self, spine: int, leaf: int) -> int:
        return self.leaves * self.spines + (spine - 1) * self.leaves + leaf

    def spare_port(self, spare: int, leaf: int) -> int:
        return 2 * self.leaves * self.spines + (spare - 1) * self.leaves + leaf

    @property
    def ports(self) -> range:
        return range(1, 2 * self.leaves * self.spines + self.spares * self.leaves + 1)

    def spine_names(self) -> list[str]:
        return [f"spine{j}" for j in range(1, self.spines + 1)]

    def spare_names(self) -> list[str]:
        return [f"spare{p}" for p in range(1, self.spares + 1)]

    def initial_circuits(self) -> list[Circuit]:
        """Leaf i's uplink j to spine j's port i, for every leaf and spine; spares unpatched."""
        return sorted(normal(self.leaf_port(i, j), self.spine_port(j, i))
                      for i in range(1, self.leaves + 1) for j in range(1, self.spines + 1))

    def device_ports(self, device: str) -> dict[int, int]:
        """OCS port -> leaf index for a spine or spare (`spine2`, `spare1`): the ports its leaf links arrive on."""
        if device in self.spine_names():
            j = int(device.removeprefix("spine"))
            return {self.spine_port(j, i): i for i in range(1, self.leaves + 1)}
        if device in self.spare_names():
            p = int(device.removeprefix("spare"))
            return {self.spare_port(p, i): i for i in range(1, self.leaves + 1)}
        raise FabricError(f"{device} is not a spine or spare of this OCS fabric")


def plan_repatch(layout: OcsLayout, circuits: list[Circuit], failed: str, spare: str) -> list[Circuit]:
    """The circuits after moving `failed`'s circuits (a spine, or a spare that took a spine's place) to `spare`:
    each leaf port patched to `failed`'s port for leaf i is patched to `spare`'s port for leaf i instead. Every other
    circuit stays. Raises if `spare` is patched already or `failed` has no circuits."""
    failed_ports = layout.device_ports(failed)
    spare_ports = {leaf: port for port, leaf in layout.device_ports(spare).items()}
    peers: dict[int, int] = {}
    for a, b in circuits:
        peers[a], peers[b] = b, a
    if any(port in peers for port in spare_ports.values()):
        raise FabricError(f"{spare} is patched already: it is not a free spare")
    moved = {port: leaf for port, leaf in failed_ports.items() if port in peers}
    if not moved:
        raise FabricError(f"{failed} has no circuits to move")
    out = [c for c in circuits if c[0] not in moved and c[1] not in moved]
    out += [normal(peers[port], spare_ports[leaf]) for port, leaf in moved.items()]
    return sorted(out)


class OcsLeafSpineTopo(FabricTopo):
    """`ocs-leafspine,LEAVES,SPINES,HOSTS_PER_LEAF[,SPARES][,ocs_ms=MS]` (default 1 spare, 50 ms)."""

    kind = "leaf-spine"

    def build(self, leaves: int = 2, spines: int = 2, hosts_per_leaf: int = 2, spares: int = 1,
              ocs_ms: int = DEFAULT_RECONFIG_MS, **params: Any) -> None:
        if params:
            raise TopologySpecError(f"ocs-leafspine: unknown option(s) {', '.join(params)}")
        if ocs_ms < 0:
            raise TopologySpecError(f"ocs-leafspine: ocs_ms must be >= 0, got {ocs_ms}")
        self.layout = OcsLayout(leaves, spines, hosts_per_leaf, spares)
        try:
            model = topologies.leaf_spine(leaves, spines, hosts_per_leaf)
        except TopologyError as exc:
            raise TopologySpecError(str(exc)) from None
        self.title = f"ocs-{model.name}+{spares}"
        self.model = model
        for sw in model.switches.values():
            opts: dict[str, Any] = {"role": sw.role}
            if sw.group is not None:
                opts["group"] = sw.group
            self.addSwitch(sw.name, **opts)
        for name in self.layout.spare_names():
            self.addSwitch(name, role="spine")
        self.addSwitch(OCS_NAME, cls=OcsSwitch, circuits=self.layout.initial_circuits(), reconfig_ms=ocs_ms)
        for host in model.hosts.values():
            self.addHost(host.name, mac=host.mac, ip=f"{host.ip}/{HOST_PREFIX_LEN}")
            self.addLink(host.name, host.switch, port1=0, port2=host.port)
            self.host_count += 1
        lay = self.layout
        for i in range(1, leaves + 1):
            for j in range(1, spines + 1):
                self.addLink(f"leaf{i}", OCS_NAME, port1=hosts_per_leaf + j, port2=lay.leaf_port(i, j))
        for j in range(1, spines + 1):
            for i in range(1, leaves + 1):
                self.addLink(f"spine{j}", OCS_NAME, port1=i, port2=lay.spine_port(j, i))
        for p in range(1, spares + 1):
            for i in range(1, leaves + 1):
                self.addLink(f"spare{p}", OCS_NAME, port1=i, port2=lay.spare_port(p, i))

    @property
    def hidden_from_controller(self) -> set[str]:
        """Nodes the controller's topology file leaves out: the OCS and the spares."""
        return {OCS_NAME, *self.layout.spare_names()}

    @property
    def logical_links(self) -> list[tuple[str, int, str, int]]:
        """The leaf-spine links the circuits make, as the controller sees them (a, a_port, b, b_port)."""
        return [(link.a, link.a_port, link.b, link.b_port) for link in self.model.links]


def ocs_of(topo: Any) -> OcsLayout | None:
    """The layout of an OCS fabric topology, None for any other."""
    return topo.layout if isinstance(topo, OcsLeafSpineTopo) else None

