"""The fabric as the controller sees it: switches, hosts, links; a YAML file format and a networkx view.

The file is what the Mininet runner writes and what an operator writes by hand for real switches (format in
docs/controller.md). Links between switches are the source of truth for switch ports; each host names its switch
and port. A switch's `ports` map (port -> neighbour) is derived, written on save for readers, and checked on load.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import yaml

from controller.exceptions import TopologyError
from controller.nccl_facts import from_mapping

KINDS = ("generic", "leaf-spine", "fat-tree", "dragonfly", "torus")


@dataclass
class Switch:
    name: str
    grpc: str = ""
    device_id: int = 0
    role: str = ""  # hint: leaf, spine, edge, agg, core, router, ...
    group: int | None = None  # dragonfly group, fat-tree pod
    coord: tuple[int, ...] | None = None  # torus coordinates
    cpu_port: int | None = None
    slots: int | None = None  # aggregation slots the switch can lend to jobs (None: from the pipeline's default)
    groups: int | None = None  # multicast groups available to jobs
    priority_queues: int = 1  # egress queues per port (simple_switch --priority-queues); priorities must stay below
    ip: str = ""  # the switch's own address (aggregation traffic is sent to and from it); derived when empty
    mac: str = ""
    thrift: str = ""  # host:port of BMv2's Thrift admin port: register writes where P4Runtime has none


@dataclass
class Host:
    name: str
    switch: str
    port: int
    mac: str = ""
    ip: str = ""
    nccl: dict[str, Any] | None = None  # NIC/CPU facts for NCCL topology files (controller/nccl_facts.py)


@dataclass
class Link:
    a: str
    a_port: int
    b: str
    b_port: int
    bandwidth_mbps: float | None = None

    def port_of(self, node: str) -> int:
        return self.a_port if node == self.a else self.b_port

    def other(self, node: str) -> str:
        return self.b if node == self.a else self.a


@dataclass
class Tls:
    """How the controller reaches P4Runtime ports over TLS: the CA that signed the switches' certificates and, for
    mutual TLS, the controller's own certificate and key (PEM paths; relative ones are relative to the file)."""

    ca: str
    cert: str = ""
    key: str = ""
    server_name: str = ""  # check switches' certificates against this name instead of their address


@dataclass
class Topology:
    name: str = "fabric"
    kind: str = "generic"
    switches: dict[str, Switch] = field(default_factory=dict)
    hosts: dict[str, Host] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    tls: Tls | None = None

    # -- building ---------------------------------------------------------------------------------------------
    def add_switch(self, name: str, **attrs: Any) -> Switch:
        if name in self.switches or name in self.hosts:
            raise TopologyError(f"duplicate node name {name!r}")
        sw = Switch(name, **attrs)
        self.switches[name] = sw
        return sw

    def add_host(self, name: str, switch: str, port: int, **attrs: Any) -> Host:
        if name in self.switches or name in self.hosts:
            raise TopologyError(f"duplicate node name {name!r}")
        host = Host(name, switch, port, **attrs)
        self.hosts[name] = host
        return host

    def add_link(self, a: str, a_port: int, b: str, b_port: int, bandwidth_mbps: float | None = None) -> Link:
        link = Link(a, a_port, b, b_port, bandwidth_mbps)
        self.links.append(link)
        return link

    def validate(self) -> None:
        """Raise TopologyError on unknown nodes, reused ports or a bad kind."""
        if self.kind not in KINDS:
            raise TopologyError(f"unknown topology kind {self.kind!r} (one of {', '.join(KINDS)})")
        used: dict[tuple[str, int], str] = {}

        def claim(sw: str, port: int, what: str) -> None:
            if sw not in self.switches:
                raise TopologyError(f"{what} refers to unknown switch {sw!r}")
            if not isinstance(port, int) or port < 0:
                raise TopologyError(f"{what}: port {port!r} is not a non-negative integer")
            if (sw, port) in used:
                raise TopologyError(f"port {sw}:{port} used by both {used[sw, port]} and {what}")
            used[sw, port] = what

        for host in self.hosts.values():
            claim(host.switch, host.port, f"host {host.name}")
            if host.nccl is not None:
                if not isinstance(host.nccl, dict):
                    raise TopologyError(f"host {host.name}: nccl must be a mapping of NIC facts")
                from_mapping(host.nccl, f"host {host.name}")
        for link in self.links:
            if link.a == link.b:
                raise TopologyError(f"link {link.a}:{link.a_port} loops back to the same switch")
            claim(link.a, link.a_port, f"link {link.a}-{link.b}")
            claim(link.b, link.b_port, f"link {link.a}-{link.b}")
        devices: dict[tuple[str, int], str] = {}
        for sw in self.switches.values():
            if not 1 <= sw.priority_queues <= 8:
                raise TopologyError(f"switch {sw.name}: priority_queues {sw.priority_queues} outside 1..8")
            key = (sw.grpc, sw.device_id)
            if sw.grpc and key in devices:
                raise TopologyError(f"switches {devices[key]} and {sw.name} share gRPC address {sw.grpc} "
                                    f"and device id {sw.device_id}")
            devices[key] = sw.name

    # -- views ------------------------------------------------------------------------------------------------
    def ports(self, switch: str) -> dict[int, str]:
        """Port number -> neighbour name (switch or host) for one switch."""
        out: dict[int, str] = {}
        for link in self.links:
            if switch in (link.a, link.b):
                out[link.port_of(switch)] = link.other(switch)
        for host in self.hosts.values():
            if host.switch == switch:
                out[host.port] = host.name
        return dict(sorted(out.items()))

    def switch_address(self, switch: str) -> tuple[str, str]:
        """(IPv4, MAC) of a switch: as given in the file, else derived from its position (10.255.x.y, 02:..)."""
        sw = self.switches[switch]
        index = sorted(self.switches).index(switch) + 1
        ip = sw.ip or f"10.255.{index >> 8}.{index & 0xFF}"
        mac = sw.mac or f"02:00:00:ff:{index >> 8:02x}:{index & 0xFF:02x}"
        return ip, mac

    def port_towards(self, switch: str, neighbour: str) -> int:
        for port, name in self.ports(switch).items():
            if name == neighbour:
                return port
        raise TopologyError(f"switch {switch} has no port towards {neighbour}")

    def graph(self, *, include_hosts: bool = True, down_switches: Iterable[str] = (),
              down_links: Iterable[tuple[str, str]] = ()) -> nx.Graph:
        """Undirected graph; nodes carry `kind` (switch/host), edges carry `ports` {node: port}.

        Failed switches and links are left out, so trees computed on it route around them.
        """
        down = set(down_switches)
        cut = {frozenset(x) for x in down_links}
        g = nx.Graph(name=self.name, kind=self.kind)
        for sw in self.switches.values():
            if sw.name not in down:
                g.add_node(sw.name, kind="switch", role=sw.role, group=sw.group, coord=sw.coord)
        for link in self.links:
            if link.a in down or link.b in down or frozenset((link.a, link.b)) in cut:
                continue
            g.add_edge(link.a, link.b, ports={link.a: link.a_port, link.b: link.b_port},
                       bandwidth_mbps=link.bandwidth_mbps)
        if include_hosts:
            for host in self.hosts.values():
                if host.switch in down:
                    continue
                g.add_node(host.name, kind="host", mac=host.mac, ip=host.ip)
                g.add_edge(host.name, host.switch, ports={host.switch: host.port})
        return g

    # -- serialisation ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        switches = []
        for sw in self.switches.values():
            d: dict[str, Any] = {"name": sw.name, "grpc": sw.grpc, "device_id": sw.device_id}
            for key in ("role", "group", "cpu_port", "slots", "groups", "priority_queues", "ip", "mac", "thrift"):
                value = getattr(sw, key)
                if value not in (None, "") and not (key == "priority_queues" and value == 1):
                    d[key] = value
            if sw.coord is not None:
                d["coord"] = list(sw.coord)
            d["ports"] = self.ports(sw.name)
            switches.append(d)
        hosts = [{k: v for k, v in vars(h).items() if v not in ("", None)} for h in self.hosts.values()]
        links = []
        for link in self.links:
            d = {"a": link.a, "a_port": link.a_port, "b": link.b, "b_port": link.b_port}
            if link.bandwidth_mbps is not None:
                d["bandwidth_mbps"] = link.bandwidth_mbps
            links.append(d)
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.tls is not None:
            out["tls"] = {k: v for k, v in vars(self.tls).items() if v}
        out.update({"switches": switches, "hosts": hosts, "links": links})
        return out

    @classmethod
    def from_dict(cls, data: Any, source: str = "topology") -> Topology:
        if not isinstance(data, dict):
            raise TopologyError(f"{source}: expected a mapping with switches, hosts and links")
        topo = cls(name=str(data.get("name", "fabric")), kind=str(data.get("kind", "generic")))
        try:
            declared_ports: dict[str, dict[int, str]] = {}
            for d in data.get("switches") or []:
                d = dict(d)
                ports = d.pop("ports", None)
                if "coord" in d and d["coord"] is not None:
                    d["coord"] = tuple(int(c) for c in d["coord"])
                sw = topo.add_switch(**d)
                if ports:
                    declared_ports[sw.name] = {int(p): str(n) for p, n in ports.items()}
            if data.get("tls"):
                topo.tls = Tls(**{k: str(v) for k, v in dict(data["tls"]).items()})
            for d in data.get("hosts") or []:
                topo.add_host(**d)
            for d in data.get("links") or []:
                if isinstance(d, list | tuple):
                    topo.add_link(str(d[0]), int(d[1]), str(d[2]), int(d[3]))
                else:
                    topo.add_link(**d)
        except TypeError as exc:
            raise TopologyError(f"{source}: bad entry: {exc}") from None
        topo.validate()
        for name, ports in declared_ports.items():
            derived = topo.ports(name)
            if ports != derived:
                raise TopologyError(f"{source}: switch {name} declares ports {ports} but links and hosts give "
                                    f"{derived}")
        return topo

    @classmethod
    def load(cls, path: str | Path) -> Topology:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise TopologyError(f"cannot read topology {path}: {exc.strerror}") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise TopologyError(f"{path}: not valid YAML: {exc}".splitlines()[0]) from None
        topo = cls.from_dict(data, str(path))
        if topo.tls is not None:  # certificate paths are relative to the topology file
            base = Path(path).resolve().parent
            for key in ("ca", "cert", "key"):
                value = getattr(topo.tls, key)
                if value and not Path(value).is_absolute():
                    setattr(topo.tls, key, str(base / value))
        return topo

    def save(self, path: str | Path) -> None:
        Path(path).write_text(yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None))
