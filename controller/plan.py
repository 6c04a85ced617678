"""What a job needs on each switch of its tree, independent of table names.

`plan_job` turns a reduction tree plus resource grants into one `SwitchJobPlan` per switch: the switch's role,
its children (ports and their child indices, i.e. bitmap bits), the port towards its parent and its own index
there, the slot range and the multicast group for results going down. `program.py` maps plans onto the P4
program's tables; keeping the two apart lets the tree logic be tested without a pipeline.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from controller.exceptions import TreeError
from controller.resources import Grant
from controller.topology import Topology
from controller.trees import ReductionTree

AGG_PORT = 0xBEE0  # docs/protocol.md: UDP port of aggregation traffic between switches and default worker port
MAX_CHILDREN = 32  # the switch keeps a 32-bit arrival bitmap per slot; the header's child field has 5 bits

QUANT_MODES = {"int32": 0, "int16": 1, "int8": 2}


@dataclass(frozen=True)
class Child:
    port: int
    index: int  # the child's bit in the slot bitmap at this switch
    name: str
    is_host: bool
    ip: str = ""
    mac: str = ""
    udp_port: int = AGG_PORT  # where RESULTs go: a worker's receive port, AGG_PORT towards a switch


@dataclass(frozen=True)
class SwitchJobPlan:
    job_id: int
    switch: str
    role: str  # "root", "inner", "leaf"; a root may also have hosts
    is_root: bool
    slot_base: int
    slot_count: int
    group: int
    quant: str
    children: tuple[Child, ...]
    job_idx: int = 0
    scale: int = 0
    parent: str | None = None
    parent_port: int | None = None
    index_at_parent: int | None = None

    @property
    def fan_in(self) -> int:
        return len(self.children)

    @property
    def child_mask(self) -> int:
        return (1 << self.fan_in) - 1

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["children"] = [asdict(c) for c in self.children]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SwitchJobPlan:
        d = dict(d)
        d["children"] = tuple(Child(**c) for c in d["children"])
        return cls(**d)


@dataclass
class MemberInfo:
    """What a worker needs to join: its switch, the port it hangs off, and its child index there."""

    host: str
    rank: int
    switch: str
    port: int
    child_index: int
    ip: str = ""
    mac: str = ""


@dataclass
class JobPlan:
    job_id: int
    switches: dict[str, SwitchJobPlan] = field(default_factory=dict)
    members: list[MemberInfo] = field(default_factory=list)


def plan_job(topo: Topology, tree: ReductionTree, grants: dict[str, Grant], job_id: int, quant: str,
             rank_order: list[str] | None = None, *, scale: int = 0,
             worker_ports: dict[str, int] | None = None) -> JobPlan:
    if not -128 <= scale <= 127:
        raise TreeError(f"scale exponent {scale} outside -128..127")
    if quant not in QUANT_MODES:
        raise TreeError(f"unknown quantization mode {quant!r} (one of {', '.join(QUANT_MODES)})")
    plan = JobPlan(job_id)
    index_at: dict[str, int] = {}  # child switch -> its index at its parent
    host_index: dict[str, tuple[int, int]] = {}  # host -> (port, index)
    for sw in tree.switches:
        kids: list[tuple[int, str, bool]] = []
        for c in tree.child_switches(sw):
            kids.append((topo.port_towards(sw, c), c, False))
        for h in tree.child_hosts(sw):
            kids.append((topo.hosts[h].port, h, True))
        kids.sort()
        if len(kids) > MAX_CHILDREN:
            raise TreeError(f"switch {sw} would have {len(kids)} children in job {job_id}; at most {MAX_CHILDREN}")
        children = []
        for i, (port, name, is_host) in enumerate(kids):
            h_info = topo.hosts.get(name) if is_host else None
            if h_info is not None:
                udp = (worker_ports or {}).get(name, AGG_PORT)
                children.append(Child(port, i, name, True, h_info.ip, h_info.mac, udp))
            else:
                ip, mac = topo.switch_address(name)
                children.append(Child(port, i, name, False, ip, mac))
            if is_host:
                host_index[name] = (port, i)
            else:
                index_at[name] = i
        parent = tree.parent[sw]
        g = grants[sw]
        plan.switches[sw] = SwitchJobPlan(
            job_id=job_id, switch=sw, role=tree.role(sw), is_root=parent is None, slot_base=g.slot_base,
            slot_count=g.slot_count, group=g.group, quant=quant, children=tuple(children), job_idx=g.job_idx,
            scale=scale, parent=parent,
            parent_port=topo.port_towards(sw, parent) if parent is not None else None)
    for sw, p in list(plan.switches.items()):
        if p.parent is not None:
            plan.switches[sw] = SwitchJobPlan(**{**p.__dict__, "index_at_parent": index_at[sw]})
    order = rank_order or tree.members
    for rank, host in enumerate(order):
        port, index = host_index[host]
        info = topo.hosts[host]
        plan.members.append(MemberInfo(host, rank, info.switch, port, index, info.ip, info.mac))
    return plan
