"""The software-fabric regime of the model: an emulation where every switch and every host is a process on a few
shared CPU cores (`Params.cores`), as in `p4ina run` on the embedded target or on BMv2.

There the link rate hardly matters (veths are memory copies); what decides an all-reduce's time is

- CPU work: every packet a software switch receives or sends costs it `switch_op_cpu_s`, every aggregation packet
  a host agent sends or receives costs it `host_op_cpu_s`; all processes share `cores`, and one process (one
  Python interpreter) never uses more than one core, so the work takes max(total / cores, busiest process);
- scheduling: a latency-bound message waits, at each process it crosses, for that process to be scheduled, which
  on `cores` cores shared by P runnable processes costs about `wake_s` x P / cores per process crossed;
- wake-ups: a process pays about one packet's worth of CPU each time it is scheduled, and while the other processes
  have their turn about P / cores packets queue for it, so every packet operation costs (1 + cores / P) times its
  own CPU (`wakeup_factor`). This is why the emulation gets more efficient per packet as workers are added (one
  run set here, 256 KB in-network: 0.67 ms per chunk at 2 workers, 1.47 ms at 8, 2.2 times, where the packet
  counts alone say 2.5 to 3 times).

These are the terms that make the emulation slow down as workers are added even though each worker still sends
its chunk once: more processes share the cores, and each leaf handles more packets per chunk. On dedicated
hardware (`cores=None`) none of this applies and the functions here are not called.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.scale.model import Fabric, Params


def tree_switches(fabric: Fabric, params: Params) -> int:
    """Switches of one aggregation tree: a switch per first-level domain, the domains' parents, one root."""
    if fabric.tree_depth == 1:
        return 1
    groups = math.ceil(fabric.hosts / max(1, fabric.group_hosts))
    if fabric.tree_depth == 2:
        return groups + 1
    return groups + math.ceil(groups / params.switch_radix) + 1


def processes(fabric: Fabric, params: Params) -> int:
    """Processes that take part in a collective: every worker and every switch of the tree (the switches a
    topology-aware ring crosses are the same leaves and a spine)."""
    return fabric.hosts + tree_switches(fabric, params)


def wake_per_process(fabric: Fabric, params: Params) -> float:
    """Expected wait, per process a latency-bound message crosses, for that process to get a core."""
    assert params.cores is not None
    return params.wake_s * processes(fabric, params) / params.cores


def wakeup_factor(fabric: Fabric, params: Params) -> float:
    """Each packet operation's CPU including its share of the wake-up that delivered it (module docstring)."""
    assert params.cores is not None
    return 1 + params.cores / processes(fabric, params)


def shared_cpu_time(total_work_s: float, busiest_process_s: float, params: Params) -> float:
    """Time for CPU work spread over processes that share `cores`: no faster than the cores allow in total, and no
    faster than the busiest single-threaded process allows."""
    assert params.cores is not None
    return max(total_work_s / params.cores, busiest_process_s)


def innet_ops_per_chunk(fabric: Fabric, params: Params) -> tuple[float, float, float]:
    """(switch packet operations, host packet operations, the busiest process's CPU seconds) per chunk.

    Each tree edge carries two packets per chunk (one up, one down) and each packet is an operation at both ends:
    a host edge costs its switch 2 operations and its host 2; a switch-to-switch edge costs 4 switch operations."""
    switch_ops = 2 * fabric.hosts + 4 * (tree_switches(fabric, params) - 1)
    host_ops = 2 * fabric.hosts
    from bench.scale.model import busiest_switch_packets  # the model owns the per-switch packet count

    busiest = max(busiest_switch_packets(fabric, params) * params.switch_op_cpu_s, 2 * params.host_op_cpu_s)
    return switch_ops, host_ops, busiest


def innet_cpu_time(fabric: Fabric, chunks: int, params: Params) -> float:
    """In-network all-reduce on a software fabric: the chunks' CPU work, pipelined by the window, plus one round
    trip's scheduling waits (up the tree and back, and the two hosts' ends)."""
    switch_ops, host_ops, busiest = innet_ops_per_chunk(fabric, params)
    wakeups = wakeup_factor(fabric, params)
    work = chunks * (switch_ops * params.switch_op_cpu_s + host_ops * params.host_op_cpu_s) * wakeups
    round_trip = (2 * fabric.tree_depth + 2) * wake_per_process(fabric, params)
    return shared_cpu_time(work, chunks * busiest * wakeups, params) + round_trip


def tcp_packets(message_bytes: float, params: Params) -> float:
    """Segments plus acknowledgements a TCP transfer of `message_bytes` puts on the wire."""
    segments = max(1, math.ceil(message_bytes / params.tcp_mss_bytes))
    return segments * (1 + params.acks_per_segment)


def ring_cpu_time(fabric: Fabric, message_bytes: float, params: Params) -> float:
    """Host ring over TCP on a software fabric: 2(N-1) steps; in each, every rank sends M/N bytes to its neighbour
    through `host_to_host_hops` software switches (two operations per packet per switch) and waits for the
    neighbour's data to cross the same processes. The hosts' own TCP work is the kernel's and is left out."""
    n = fabric.hosts
    packets = tcp_packets(message_bytes / n, params)
    wakeups = wakeup_factor(fabric, params)
    step_ops = n * packets * fabric.host_to_host_hops * 2 * wakeups
    busiest_ops = 4 * min(n, fabric.group_hosts) * packets * wakeups  # a leaf: its hosts' flows in and out
    step_work = shared_cpu_time(step_ops * params.switch_op_cpu_s, busiest_ops * params.switch_op_cpu_s, params)
    step_wait = (fabric.host_to_host_hops + 2) * wake_per_process(fabric, params)
    return 2 * (n - 1) * (step_work + step_wait)
