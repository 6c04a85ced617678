"""The topology file for the controller (format: docs/controller.md), written from a Mininet topology and the
P4Runtime addresses of the switches that run it. Port numbers are Mininet's, which are also the P4 ports."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p4fabric.topos import FabricTopo

if TYPE_CHECKING:
    from controller.topology import Topology


def controller_topology(topo: FabricTopo, grpc: Mapping[str, str], *, device_ids: Mapping[str, int] | None = None,
                        cpu_ports: Mapping[str, int | None] | None = None,
                        bandwidth_mbps: float | None = None, priority_queues: int = 1,
                        tls: Mapping[str, str] | None = None,
                        thrift: Mapping[str, str | None] | None = None) -> Topology:
    """The controller's `Topology` for `topo` whose switch `name` answers P4Runtime at `grpc[name]`. Every switch
    runs `priority_queues` egress queues (the controller maps DSCP to priorities only when there are several);
    `tls` (ca, cert, key: PEM paths) is how the controller reaches TLS switches; `thrift[name]` is a switch's Thrift
    admin address where P4Runtime has no register writes (BMv2)."""
    from controller.topology import Tls, Topology

    out = Topology(name=topo.title, kind=topo.kind, tls=Tls(**tls) if tls else None)
    # an OCS fabric (p4fabric.ocsfabric): the patch panel and the spares are below the controller's view
    hidden: set[str] = set(getattr(topo, "hidden_from_controller", ()))
    for name in topo.switches():
        if name in hidden:
            continue
        info: dict[str, Any] = topo.nodeInfo(name)
        attrs: dict[str, Any] = {"grpc": grpc.get(name, ""), "device_id": (device_ids or {}).get(name, 0)}
        if info.get("role"):
            attrs["role"] = info["role"]
        if info.get("group") is not None:
            attrs["group"] = int(info["group"])
        if info.get("coord") is not None:
            attrs["coord"] = tuple(int(c) for c in info["coord"])
        if priority_queues > 1:
            attrs["priority_queues"] = priority_queues
        cpu = (cpu_ports or {}).get(name)
        if cpu is not None:
            attrs["cpu_port"] = cpu
        admin = (thrift or {}).get(name)
        if admin:
            attrs["thrift"] = admin
        out.add_switch(name, **attrs)
    for a, b, link in topo.links(withInfo=True):
        if a in hidden or b in hidden:
            continue
        a_port, b_port = int(link["port1"]), int(link["port2"])
        a_is_switch, b_is_switch = topo.isSwitch(a), topo.isSwitch(b)
        if a_is_switch and b_is_switch:
            out.add_link(a, a_port, b, b_port, bandwidth_mbps=link.get("bw", bandwidth_mbps))
            continue
        host, switch, port = (b, a, a_port) if a_is_switch else (a, b, b_port)
        hinfo = topo.nodeInfo(host)
        # facts of the emulated host's NIC that Mininet fixes: its interface name and, when shaped, its rate
        host_port = b_port if a_is_switch else a_port
        facts: dict[str, Any] = {"netdev": f"{host}-eth{host_port}"}
        rate = link.get("bw", bandwidth_mbps)
        if rate:
            facts["speed_mbps"] = max(1, round(float(rate)))
        out.add_host(host, switch, port, mac=str(hinfo.get("mac", "")), ip=str(hinfo.get("ip", "")).split("/")[0],
                     nccl=facts)
    for a, a_port, b, b_port in getattr(topo, "logical_links", ()):
        out.add_link(a, a_port, b, b_port, bandwidth_mbps=topo.lopts.get("bw", bandwidth_mbps))
    out.validate()
    return out


def write_topology_file(path: Path, topo: FabricTopo, grpc: Mapping[str, str], **kwargs: Any) -> Topology:
    model = controller_topology(topo, grpc, **kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    return model
