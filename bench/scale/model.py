"""An analytical model of all-reduce time at scale (1k..100k GPUs), for ring, tree, in-network and hierarchical
algorithms on fat-tree, leaf-spine, dragonfly and torus fabrics.

Why analytical rather than a packet simulator: at 100k endpoints a packet-level simulation of a 64 MB all-reduce is
hours of CPU per point, while the quantities that decide which algorithm wins are few and well understood: the number
of latency-bound steps, the bytes each host link must carry (2(N-1)/N x M for a ring, M up and M down for in-network
aggregation), the contention on oversubscribed or global links, and the per-packet work of the aggregating switches.
Each term is a closed form below, named after the quantity it stands for, so a reader can check it by hand. The few
free parameters (host overhead per message, switch latency, switch aggregation rate) are calibrated from emulated runs
(`calibrate`), and the calibration error is reported next to every prediction made from them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from bench.scale import emulation

ALGORITHMS = ("ring", "tree", "innet", "hierarchical")
TOPOLOGIES = ("fattree", "leafspine", "dragonfly", "torus")

WIRE_OVERHEAD_BYTES = 14 + 20 + 8 + 24 + 24  # Ethernet, IPv4, UDP, aggregation header, preamble+FCS+IFG


@dataclass(frozen=True)
class Params:
    """What the model needs to know about the hardware and the job. Times in seconds, rates per second."""

    link_gbps: float = 100.0
    switch_latency_s: float = 600e-9  # one switch traversal (cut-through)
    host_overhead_s: float = 5e-6  # software cost of one message/step at a host (post, poll, complete)
    payload_bytes: int = 1024  # values per aggregation packet x element size
    switch_agg_pps: float | None = None  # aggregation packets/s one switch sustains (None: line rate)
    window_packets: int = 512  # outstanding aggregation packets per worker (SwitchML's self-clocking pool)
    loss_rate: float = 0.0  # per link traversal
    retransmit_timeout_s: float = 1e-3
    oversubscription: float = 1.0  # leaf-spine: downlink/uplink capacity ratio at a leaf
    hosts_per_leaf: int = 32
    switch_radix: int = 64  # leaf-spine: a spine holds this many leaves before a super-spine tier is needed
    topology_aware_ranks: bool = True  # rings ordered leaf by leaf (controller.ranks) or not
    failure_rate_per_switch_hour: float = 0.0
    recovery_s: float = 0.0  # time to rebuild a tree after a switch failure
    # Software fabrics (bench/scale/emulation.py): CPU cores shared by every switch and host process; None for
    # dedicated hardware, where the terms below do not apply.
    cores: float | None = None
    switch_op_cpu_s: float = 0.0  # CPU a software switch spends per packet it receives or sends
    host_op_cpu_s: float = 0.0  # CPU a host agent spends per aggregation packet it sends or receives
    wake_s: float = 0.0  # scheduling wait per process crossed, per runnable process per core
    tcp_mss_bytes: int = 1448  # the host ring's TCP segments (1500-byte MTU)
    acks_per_segment: float = 0.5  # delayed ACKs

    @property
    def link_bytes_per_s(self) -> float:
        return self.link_gbps * 1e9 / 8


@dataclass(frozen=True)
class Fabric:
    """The shape numbers the algorithms need, derived from a topology for N hosts."""

    name: str
    hosts: int
    switches: int
    host_to_host_hops: float  # switch traversals between two ranks that are neighbours in a ring (average)
    diameter_hops: int  # switch traversals on the longest host-to-host path
    tree_depth: int  # levels of switches in an aggregation tree (1 = one switch sees every member)
    ring_contention: float  # how many ring flows share the most loaded link (>= 1)
    group_hosts: int  # hosts in one first-level domain (leaf, edge switch, dragonfly group, torus line)


def fabric_for(topology: str, hosts: int, params: Params) -> Fabric:
    """The smallest fabric of that family that holds `hosts` endpoints."""
    if hosts < 2:
        raise ValueError("an all-reduce needs at least 2 hosts")
    if topology == "fattree":
        k = 4
        while k**3 // 4 < hosts:
            k += 2
        edge, pod = k // 2, k * k // 4
        depth = 1 if hosts <= edge else 2 if hosts <= pod else 3
        return Fabric("fattree", hosts, 5 * k * k // 4, _ring_hops(hosts, edge, pod), 2 * depth - 1, depth, 1.0,
                      min(edge, hosts))
    if topology == "leafspine":
        per_leaf = params.hosts_per_leaf
        leaves = math.ceil(hosts / per_leaf)
        depth = 1 if leaves == 1 else 2 if leaves <= params.switch_radix else 3
        spines = max(1, math.ceil(per_leaf / max(params.oversubscription, 1e-9)))
        contention = 1.0
        if leaves > 1 and not params.topology_aware_ranks:
            # Random rank order: most ring edges leave the leaf; they share uplinks worth per_leaf/o host links.
            crossing_flows = per_leaf * (1 - 1 / leaves)
            contention = max(1.0, crossing_flows / (per_leaf / params.oversubscription))
        elif leaves > 1 and params.oversubscription > per_leaf:
            contention = params.oversubscription / per_leaf
        pod_hosts = per_leaf * params.switch_radix
        return Fabric("leafspine", hosts, leaves + spines, _ring_hops(hosts, per_leaf, pod_hosts), 2 * depth - 1,
                      depth, contention, min(per_leaf, hosts))
    if topology == "dragonfly":
        # Balanced dragonfly: a = 2p = 2h routers per group, p hosts per router, h global links per router.
        p = 1
        while (2 * p) * p * (2 * p * p + 1) < hosts:
            p += 1
        routers_per_group, groups_needed = 2 * p, math.ceil(hosts / (2 * p * p))
        depth = 1 if hosts <= p else 2 if groups_needed == 1 else 3
        per_group = routers_per_group * p
        # A topology-aware ring crosses each group boundary once; a random one crosses on almost every edge and the
        # h global links of a router carry p hosts' flows.
        contention = 1.0 if params.topology_aware_ranks else max(1.0, p * (1 - 1 / max(groups_needed, 1)))
        return Fabric("dragonfly", hosts, groups_needed * routers_per_group, _ring_hops(hosts, p, per_group),
                      3 if groups_needed > 1 else 2, depth, contention, min(per_group, hosts))
    if topology == "torus":
        # 3-D torus of switches, one host each; a ring follows a Hamiltonian cycle through neighbours.
        side = max(2, math.ceil(hosts ** (1 / 3)))
        diameter = 3 * (side // 2) + 1
        return Fabric("torus", hosts, hosts, 2.0, diameter, diameter, 1.0, min(side, hosts))
    raise ValueError(f"unknown topology {topology!r}; choose from {', '.join(TOPOLOGIES)}")


def _ring_hops(hosts: int, group1: int, group2: int) -> float:
    """Average switch traversals per ring edge when ranks are ordered group by group (1, 3 or 5 switches). The ring
    is a cycle: with g > 1 groups it leaves each group once, so g edges cross (the last one wraps around)."""
    groups1, groups2 = math.ceil(hosts / group1), math.ceil(hosts / group2)
    crossings1 = groups1 if groups1 > 1 else 0
    crossings2 = groups2 if groups2 > 1 else 0
    long_edges = crossings2
    mid_edges = crossings1 - crossings2
    short_edges = hosts - crossings1
    return (short_edges * 1 + mid_edges * 3 + long_edges * 5) / hosts


def _packets(message_bytes: float, params: Params) -> int:
    return max(1, math.ceil(message_bytes / params.payload_bytes))


def _wire_bytes(message_bytes: float, params: Params) -> float:
    return message_bytes + _packets(message_bytes, params) * WIRE_OVERHEAD_BYTES


def _step_latency(hops: float, params: Params) -> float:
    """Latency of one message: host software at both ends and the switches on the way."""
    return 2 * params.host_overhead_s + hops * params.switch_latency_s


def _loss_inflation(message_bytes: float, traversals: float, params: Params) -> tuple[float, float]:
    """(throughput factor, expected tail wait) for a message whose packets each cross `traversals` links."""
    if params.loss_rate <= 0:
        return 1.0, 0.0
    survive = (1 - params.loss_rate) ** traversals
    tail_packets = min(_packets(message_bytes, params), params.window_packets)
    tail_wait = (1 - survive**tail_packets) * params.retransmit_timeout_s
    return 1 / survive, tail_wait


def ring_time(fabric: Fabric, message_bytes: float, params: Params) -> float:
    """Reduce-scatter then all-gather: 2(N-1) steps, each moving M/N bytes per host."""
    n = fabric.hosts
    chunk = message_bytes / n
    per_step_bw = params.link_bytes_per_s / fabric.ring_contention
    inflate, tail = _loss_inflation(chunk, fabric.host_to_host_hops + 1, params)
    step = _step_latency(fabric.host_to_host_hops, params) + _wire_bytes(chunk, params) / per_step_bw * inflate
    t = 2 * (n - 1) * (step + tail)
    if params.cores is not None:  # a software fabric: the switches' CPU, not the links, is the bottleneck
        t = max(t, emulation.ring_cpu_time(fabric, message_bytes, params) * inflate + 2 * (n - 1) * tail)
    return t


def tree_time(fabric: Fabric, message_bytes: float, params: Params) -> float:
    """Host-based binary tree, pipelined: 2 log2 N latency-bound steps; an inner host receives 2M (two children)."""
    depth = math.ceil(math.log2(fabric.hosts))
    inflate, tail = _loss_inflation(message_bytes, fabric.diameter_hops + 1, params)
    latency = 2 * depth * _step_latency(fabric.diameter_hops, params)
    return latency + 2 * _wire_bytes(message_bytes, params) / params.link_bytes_per_s * inflate + 2 * depth * tail


def innet_time(fabric: Fabric, message_bytes: float, params: Params) -> float:
    """SHARP-like aggregation: each host sends M and receives M once; switches sum on the way.

    Throughput is the least of the host link, the aggregating switch's packet rate and the self-clocked window
    (window x payload per round trip)."""
    packets = _packets(message_bytes, params)
    traversals = 2 * fabric.tree_depth  # up to the root and back down
    rtt = _step_latency(traversals, params) + 2 * (params.payload_bytes + WIRE_OVERHEAD_BYTES) / params.link_bytes_per_s
    rates = [params.link_bytes_per_s / (params.payload_bytes + WIRE_OVERHEAD_BYTES),
             params.window_packets / rtt]
    if params.switch_agg_pps is not None:
        rates.append(params.switch_agg_pps / busiest_switch_packets(fabric, params))
    packet_rate = min(rates)
    inflate, tail = _loss_inflation(message_bytes, traversals + 2, params)
    t = rtt + packets / packet_rate * inflate + tail
    if params.cores is not None:  # a software fabric: the processes' shared CPU decides
        t = max(t, emulation.innet_cpu_time(fabric, packets, params) * inflate + tail)
    return t


def busiest_switch_packets(fabric: Fabric, params: Params) -> int:
    """Packets the most loaded aggregating switch handles per chunk (one aggregation slot's worth of values).

    A switch with c children receives c DATA packets and sends c RESULT copies; below the root it also sends one
    partial sum up and receives one RESULT back. A software switch's packet rate is shared by all of these, which is
    why adding workers under one leaf slows every chunk down even though each host still sends the chunk once."""
    if fabric.tree_depth == 1:
        return 2 * fabric.hosts
    per_leaf = min(fabric.group_hosts, fabric.hosts)
    leaves = math.ceil(fabric.hosts / per_leaf)
    levels = [2 * per_leaf + 2]
    if fabric.tree_depth == 2:
        levels.append(2 * leaves)
    else:
        levels.append(2 * min(leaves, params.switch_radix) + 2)
        levels.append(2 * math.ceil(leaves / params.switch_radix))
    return max(levels)


def hierarchical_time(fabric: Fabric, message_bytes: float, params: Params) -> float:
    """In-network inside each first-level domain (leaf, edge, group, torus line), a ring among one leader per
    domain, and the result broadcast back inside the domain by the same aggregation tree."""
    groups = math.ceil(fabric.hosts / fabric.group_hosts)
    local = replace(fabric, hosts=fabric.group_hosts, tree_depth=1)
    inner = innet_time(local, message_bytes, params)
    if groups == 1:
        return inner
    leaders = replace(fabric, hosts=groups, host_to_host_hops=float(fabric.diameter_hops), ring_contention=1.0)
    return inner + ring_time(leaders, message_bytes, params)


ALGORITHM_TIME: dict[str, Callable[[Fabric, float, Params], float]] = {
    "ring": ring_time,
    "tree": tree_time,
    "innet": innet_time,
    "hierarchical": hierarchical_time,
}


def allreduce_time(algorithm: str, topology: str, hosts: int, message_bytes: float, params: Params) -> float:
    """Expected all-reduce time, including the expected cost of switch failures during it."""
    if algorithm not in ALGORITHM_TIME:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    fabric = fabric_for(topology, hosts, params)
    t = ALGORITHM_TIME[algorithm](fabric, message_bytes, params)
    if params.failure_rate_per_switch_hour > 0 and params.recovery_s > 0:
        failures = fabric.switches * params.failure_rate_per_switch_hour * t / 3600
        t += failures * params.recovery_s
    return t


@dataclass(frozen=True)
class Measurement:
    """One emulated all-reduce: what ran and how long it took."""

    algorithm: str
    topology: str
    hosts: int
    message_bytes: float
    seconds: float
    #: Leaf-spine hosts per leaf of the emulated fabric when it differs from the model's default (e.g. 2 leaves).
    hosts_per_leaf: int | None = None


@dataclass(frozen=True)
class Calibration:
    params: Params
    fitted: dict[str, float]
    mean_abs_rel_error: float
    points: list[dict[str, float | str]]


# Parameters calibration may move, with the grid it searches (log-spaced, so that the fit is scale-free).
CALIBRATED = ("host_overhead_s", "switch_latency_s", "switch_agg_pps")
#: What calibration moves for a software fabric (`Params.cores` set; bench/scale/emulation.py).
SOFTWARE_CALIBRATED = ("switch_op_cpu_s", "host_op_cpu_s", "wake_s")


def calibrated_parameters(params: Params) -> tuple[str, ...]:
    """The free parameters that suit `params`' regime: hardware fabrics or a software emulation."""
    return SOFTWARE_CALIBRATED if params.cores is not None else CALIBRATED


def _log_grid(lo: float, hi: float, steps: int) -> list[float]:
    return [lo * (hi / lo) ** (i / (steps - 1)) for i in range(steps)]


def calibrate(measurements: Sequence[Measurement], base: Params, *, steps: int = 25,
              free: Sequence[str] = CALIBRATED) -> Calibration:
    """Fit host overhead, switch latency and switch aggregation rate to emulated runs (least mean relative error,
    coordinate descent over log-spaced grids, then finer multiplicative steps), and report the per-point error of the fitted model."""
    if not measurements:
        raise ValueError("calibration needs at least one measurement")
    grids = {
        "host_overhead_s": _log_grid(1e-7, 1e-1, steps),
        "switch_latency_s": _log_grid(1e-8, 1e-1, steps),
        "switch_agg_pps": _log_grid(1e2, 1e9, steps),
        "link_gbps": _log_grid(1e-3, 1e3, steps),  # free only where the links' rate is unknown (software fabrics)
        "switch_op_cpu_s": _log_grid(1e-7, 1e-2, steps),  # software fabrics (Params.cores set)
        "host_op_cpu_s": _log_grid(1e-7, 1e-2, steps),
        "wake_s": _log_grid(1e-7, 1e-1, steps),
    }
    unknown = [name for name in free if name not in grids]
    if unknown or not free:
        raise ValueError(f"cannot calibrate {', '.join(unknown) or '(nothing)'}; choose from {', '.join(grids)}")

    def error(p: Params) -> float:
        return sum(abs(predict(m, p) - m.seconds) / m.seconds for m in measurements) / len(measurements)

    best = base if base.switch_agg_pps is not None or "switch_agg_pps" not in free else replace(base, switch_agg_pps=1e6)
    best_err = error(best)
    # A coarse joint grid first: the terms trade off against each other (host overhead appears in both the ring's
    # steps and the in-network round trip), so descending one coordinate at a time from one start can stall.
    coarse = {name: grids[name][:: max(1, (steps - 1) // 6)] for name in free}
    for values in itertools.product(*(coarse[name] for name in free)):
        joint: dict[str, Any] = dict(zip(free, values, strict=True))
        cand = replace(best, **joint)
        err = error(cand)
        if err < best_err:
            best, best_err = cand, err
    for _ in range(4):  # a few sweeps of coordinate descent settle on these smooth, monotone terms
        for name in free:
            for value in grids[name]:
                change: dict[str, Any] = {name: value}
                cand = replace(best, **change)
                err = error(cand)
                if err < best_err:
                    best, best_err = cand, err
    # The grid only brackets each value (a factor of ~1.8 apart); shrinking multiplicative steps then settle it.
    factor = grids["host_overhead_s"][1] / grids["host_overhead_s"][0]
    for _ in range(12):
        factor = math.sqrt(factor)
        improved = True
        while improved:
            improved = False
            for name in free:
                for scale in (factor, 1 / factor):
                    value = min(max(getattr(best, name) * scale, grids[name][0]), grids[name][-1])
                    change = {name: value}
                    cand = replace(best, **change)
                    err = error(cand)
                    if err < best_err:
                        best, best_err, improved = cand, err, True
    points = [
        {**asdict(m), "predicted": predict(m, best), "rel_error": (predict(m, best) - m.seconds) / m.seconds}
        for m in measurements
    ]
    fitted = {name: float(getattr(best, name)) for name in free}
    return Calibration(best, fitted, best_err, points)


def predict(m: Measurement, params: Params) -> float:
    """The model's time for one measured run, on a fabric shaped like the one it ran on."""
    if m.hosts_per_leaf is not None:
        params = replace(params, hosts_per_leaf=m.hosts_per_leaf)
    return allreduce_time(m.algorithm, m.topology, m.hosts, m.message_bytes, params)


def sweep(
    algorithms: Iterable[str], topologies: Iterable[str], hosts: Iterable[int], sizes: Iterable[float], params: Params
) -> list[dict[str, float | str]]:
    """Every combination, as rows ready for JSON: time, algorithm bandwidth (M/t) and the fabric's shape."""
    rows: list[dict[str, float | str]] = []
    for topology in topologies:
        for n in hosts:
            fabric = fabric_for(topology, n, params)
            for size in sizes:
                for algorithm in algorithms:
                    t = allreduce_time(algorithm, topology, n, size, params)
                    rows.append({
                        "topology": topology, "hosts": n, "bytes": size, "algorithm": algorithm, "seconds": t,
                        "algbw_gbps": size * 8 / t / 1e9, "tree_depth": fabric.tree_depth,
                        "switches": fabric.switches,
                    })
    return rows
