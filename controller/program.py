"""The p4ina P4 program's control-plane interface (docs/p4-program.md) as entity builders.

This is the only module that knows table, action and counter names of `p4src/p4ina.p4`; everything above it
works on plans (`plan.py`, `routing.py`). Names go through P4Info, so a renamed table fails here with a clear
message instead of installing the wrong thing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from controller.client import entity
from controller.exceptions import P4InfoError
from controller.p4info import P4InfoHelper, multicast_group
from controller.plan import AGG_PORT, QUANT_MODES, SwitchJobPlan
from controller.routing import Route
from controller.topology import Topology

JOB = "P4inaIngress.admission.job"
SET_JOB_ROOT = "P4inaIngress.admission.set_job_root"
SET_JOB_MEMBER = "P4inaIngress.admission.set_job_member"
CHILDREN = "P4inaIngress.admission.agg_children"
ADMIT = "P4inaIngress.admission.admit"
NEIGHBORS = "P4inaEgress.agg_rewrite.agg_neighbors"
SET_NEIGHBOR = "P4inaEgress.agg_rewrite.set_neighbor"
IPV4_LPM = "P4inaIngress.forwarding.ipv4_lpm"
ROUTE = "P4inaIngress.forwarding.route"
ROUTE_ECMP = "P4inaIngress.forwarding.route_ecmp"
ROUTE_SPRAY = "P4inaIngress.forwarding.route_spray"
ECMP_MEMBERS = "P4inaIngress.forwarding.ecmp_members"
L2 = "P4inaIngress.forwarding.l2"
L2_FORWARD = "P4inaIngress.forwarding.l2_forward"
DSCP_PRIORITY = "P4inaIngress.qos.dscp_priority"
SET_PRIORITY = "P4inaIngress.qos.set_priority"
AGG_DROPS = "P4inaIngress.output.agg_drops"
AGG_PACKETS = "P4inaIngress.output.agg_packets"
FWD_DROPS = "P4inaIngress.forwarding.fwd_drops"
PFC_RX = "P4inaIngress.qos.pfc_rx"
BITMAP_REGISTER = "P4inaIngress.aggregation.agg_bitmap"
# The values per packet a build of the program carries (`-D AGG_VALUES=N`): the annotation `@p4ina_values(N)` on
# BITMAP_REGISTER, which P4Info keeps (p4c and the embedded compiler both copy annotations into the preamble), and
# the N per-element registers agg_v<octal index> next to it, which must agree with it (docs/p4-program.md).
VALUES_ANNOTATION = "p4ina_values"
VALUE_REGISTER_PREFIX = "P4inaIngress.aggregation.agg_v"
DEFAULT_VALUES = 64
# What makes a slot cell of `AggregationIngress` (p4src/include/aggregation.p4) free: a zero `agg_status` (the
# USED bit clear) makes the next contribution start a new round whatever its (step, seq), and resets the count,
# sums, checksum and bitmap as it does so; it also stops the cell from answering retransmissions or PULLs and from
# asking for one (`past_other`). A zero `agg_bitmap` makes a RESULT coming down for a round this switch never
# contributed to a STALE drop. The other per-cell registers (round step/seq, child count, contributions, checksum,
# the 64 values) only decide anything in a cell that is USED or has a bitmap, i.e. after this job's first
# contribution rewrote them, so they are left as they are: every register written costs one update per cell.
SLOT_REGISTERS = ("P4inaIngress.aggregation.agg_status", "P4inaIngress.aggregation.agg_bitmap")
CELLS_PER_SLOT = 2  # one cell per version
ZERO = b"\x00"  # P4Runtime's canonical bytestring for 0

DROP_REASONS = ("UNKNOWN_JOB", "NOT_ADMITTED", "SLOT_RANGE", "BAD_FORMAT", "DUPLICATE", "STALE")
DROP_ROWS_PER_JOB = 8
DEFAULT_GROUPS = 1024  # multicast group ids 1..1024 are the controller's for jobs
DSCP_GRADIENT = 46  # EF: gradients go to the switch's highest queue; everything else stays in queue 0


def _e(obj: object) -> p4runtime_pb2.Entity:
    return entity(obj)


@dataclass
class P4inaProgram:
    """Builds entities for `p4src/p4ina.p4`. `spray` chooses per-packet spraying over per-flow ECMP."""

    spray: bool = False

    # -- capacity ---------------------------------------------------------------------------------------------
    def capacity(self, helper: P4InfoHelper) -> tuple[int, int, int]:
        try:
            cells = int(helper.registers.get(BITMAP_REGISTER).size)
            rows = int(helper.counters.get(AGG_PACKETS).size)
        except P4InfoError as exc:
            raise P4InfoError(f"the pipeline is not the p4ina program: {exc}") from None
        return cells // 2, DEFAULT_GROUPS, rows - 1  # 2 versions per slot; the last row is for unknown jobs

    def values_per_packet(self, helper: P4InfoHelper) -> int:
        """The N of the installed build, from P4Info alone: `@p4ina_values(N)` on agg_bitmap, checked against the
        number of per-element value registers (a pipeline without the annotation predates it: 64)."""
        return pipeline_values(helper)

    # -- jobs ---------------------------------------------------------------------------------------------------
    def slot_reset_entities(self, helper: P4InfoHelper, slot_base: int, slot_count: int) -> list[p4runtime_pb2.Entity]:
        """Register writes (MODIFY) that free slots `slot_base .. slot_base+slot_count-1`, both versions: a job's
        workers start at step 0, and the cells must not remember a deleted job's rounds."""
        first, end = slot_base * CELLS_PER_SLOT, (slot_base + slot_count) * CELLS_PER_SLOT
        out = []
        for name in SLOT_REGISTERS:
            rid = helper.register_entry(name, first).register_id
            helper.register_entry(name, end - 1)  # the whole range fits the register, or a clear error
            for cell in range(first, end):
                e = p4runtime_pb2.Entity()  # built in place: a slot range is hundreds of updates
                e.register_entry.register_id = rid
                e.register_entry.index.index = cell
                e.register_entry.data.bitstring = ZERO
                out.append(e)
        return out

    def job_entities(self, helper: P4InfoHelper, plan: SwitchJobPlan, topo: Topology) -> list[p4runtime_pb2.Entity]:
        """One switch's share of a job, addressed from the topology (see `switch_job_entities`)."""
        my_ip, my_mac = topo.switch_address(plan.switch)
        parent_ip, parent_mac = topo.switch_address(plan.parent) if plan.parent is not None else ("", "")
        return switch_job_entities(helper, plan, my_mac=my_mac, my_ip=my_ip, parent_mac=parent_mac,
                                   parent_ip=parent_ip)

    # -- forwarding ---------------------------------------------------------------------------------------------
    def route_entities(self, helper: P4InfoHelper, switch: str, routes: Iterable[Route],
                       topo: Topology) -> list[p4runtime_pb2.Entity]:
        """IPv4 routes (ECMP/spray groups for equal-cost port sets), L2 entries for local hosts, DSCP classes."""
        _, my_mac = topo.switch_address(switch)
        ports = topo.ports(switch)
        out: list[p4runtime_pb2.Entity] = []
        groups: dict[tuple[int, ...], int] = {}

        def next_hop_mac(port: int, route: Route) -> str:
            if route.local:
                return route.mac
            return topo.switch_address(ports[port])[1]

        for r in routes:
            prefix = f"{r.ip}/32"
            if len(r.ports) == 1:
                port = r.ports[0]
                out.append(_e(helper.table_entry(IPV4_LPM, {"hdr.ipv4.dst_addr": prefix}, ROUTE,
                                                 {"port": port, "src_mac": my_mac,
                                                  "dst_mac": next_hop_mac(port, r)})))
            else:
                if r.ports not in groups:
                    gid = len(groups) + 1
                    groups[r.ports] = gid
                    for member, port in enumerate(r.ports):
                        out.append(_e(helper.table_entry(
                            ECMP_MEMBERS, {"meta.fwd.ecmp_group": gid, "meta.fwd.ecmp_member": member}, ROUTE,
                            {"port": port, "src_mac": my_mac, "dst_mac": topo.switch_address(ports[port])[1]})))
                out.append(_e(helper.table_entry(IPV4_LPM, {"hdr.ipv4.dst_addr": prefix},
                                                 ROUTE_SPRAY if self.spray else ROUTE_ECMP,
                                                 {"group": groups[r.ports], "size": len(r.ports)})))
            if r.local and r.mac:
                out.append(_e(helper.table_entry(L2, {"hdr.ethernet.dst_addr": r.mac}, L2_FORWARD,
                                                 {"port": r.ports[0]})))
        out += self.qos_entities(helper, switch, topo)
        return out

    def qos_entities(self, helper: P4InfoHelper, switch: str, topo: Topology) -> list[p4runtime_pb2.Entity]:
        """DSCP -> priority for the queues the switch really has: simple_switch (and the embedded switch) drop a
        packet whose priority is not below the number of queues, so with one queue nothing is installed."""
        queues = topo.switches[switch].priority_queues
        if queues <= 1:
            return []
        return [_e(helper.table_entry(DSCP_PRIORITY, {"hdr.ipv4.dscp": DSCP_GRADIENT}, SET_PRIORITY,
                                      {"prio": min(7, queues - 1)}))]

    # -- telemetry ----------------------------------------------------------------------------------------------
    def job_counter_indices(self, job_idx: int) -> dict[str, tuple[str, int]]:
        """Metric name -> (counter, index) for one job on one switch."""
        out = {"aggregated_packets": (AGG_PACKETS, job_idx)}
        for reason, name in enumerate(DROP_REASONS):
            out[f"drops_{name.lower()}"] = (AGG_DROPS, job_idx * DROP_ROWS_PER_JOB + reason)
        return out

    def unknown_job_row(self, helper: P4InfoHelper) -> int:
        return int(helper.counters.get(AGG_PACKETS).size) - 1


def switch_job_entities(helper: P4InfoHelper, plan: SwitchJobPlan, *, my_mac: str, my_ip: str,
                        parent_mac: str = "", parent_ip: str = "") -> list[p4runtime_pb2.Entity]:
    """The entities that make `plan.switch` take part in a job: PRE group first (the job entry refers to it), then
    the job entry (root or member), one admission entry per child and one neighbour entry per child and towards the
    parent. The one place these entries are built: the controller, the benchmarks and the test fabrics all use it,
    so nothing measures or tests a job the controller would not install. `my_*` is the switch's own address (the
    RESULT source), `parent_*` the parent switch's (members only)."""
    out = [_e(multicast_group(plan.group, [(c.port, c.index) for c in plan.children]))]
    common = {"job_idx": plan.job_idx, "slot_base": plan.slot_base, "slot_count": plan.slot_count,
              "children": plan.fan_in, "mcast_grp": plan.group, "scale": plan.scale & 0xFF}
    if plan.is_root:
        action, params = SET_JOB_ROOT, {**common, "result_fmt": QUANT_MODES[plan.quant]}
    else:
        if plan.parent_port is None or plan.index_at_parent is None:
            raise P4InfoError(f"switch {plan.switch}: a member of job {plan.job_id} needs its parent port and index")
        action, params = SET_JOB_MEMBER, {**common, "parent_port": plan.parent_port,
                                          "my_index": plan.index_at_parent}
    out.append(_e(helper.table_entry(JOB, {"hdr.agg.job_id": plan.job_id}, action, params)))
    for c in plan.children:
        out.append(_e(helper.table_entry(CHILDREN, {"standard_metadata.ingress_port": c.port,
                                                    "hdr.agg.job_id": plan.job_id, "hdr.agg.child": c.index},
                                         ADMIT)))
    neighbours = [(c.port, c.mac, c.ip, c.udp_port) for c in plan.children]
    if plan.parent is not None and plan.parent_port is not None:
        neighbours.append((plan.parent_port, parent_mac, parent_ip, AGG_PORT))
    for port, mac, ip, udp in neighbours:
        if not mac or not ip:
            raise P4InfoError(f"switch {plan.switch} port {port}: the neighbour has no MAC/IP in the topology")
        out.append(_e(helper.table_entry(
            NEIGHBORS, {"hdr.agg.job_id": plan.job_id, "standard_metadata.egress_port": port}, SET_NEIGHBOR,
            {"src_mac": my_mac, "dst_mac": mac, "src_addr": my_ip, "dst_addr": ip, "dst_port": udp})))
    return out


def pipeline_values(helper: P4InfoHelper) -> int:
    """Values per packet of the p4ina build whose P4Info `helper` holds (see VALUES_ANNOTATION)."""
    try:
        bitmap = helper.registers.get(BITMAP_REGISTER)
    except P4InfoError as exc:
        raise P4InfoError(f"the pipeline is not the p4ina program: {exc}") from None
    prefix = f"@{VALUES_ANNOTATION}("
    declared = [a for a in bitmap.preamble.annotations if a.replace(" ", "").startswith(prefix)]
    registers = sum(1 for r in helper.p4info.registers if r.preamble.name.startswith(VALUE_REGISTER_PREFIX))
    n = DEFAULT_VALUES  # a build from before the annotation
    if declared:
        text = declared[0].replace(" ", "")[len(prefix):].rstrip(")")
        try:
            n = int(text, 0)
        except ValueError:
            raise P4InfoError(f"{BITMAP_REGISTER}: malformed annotation {declared[0]!r}") from None
    if registers and n != registers:  # the value registers are optional in P4Info (not control-plane interface)
        raise P4InfoError(f"the pipeline declares {n} values per packet (@{VALUES_ANNOTATION}) but has {registers} "
                          "value registers")
    return n
