"""A leaf-spine whose switches are in-process P4Runtime doubles (controller_p4rt_double), with the documented P4Info
pushed: the set-up the controller's job tests share."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from controller_p4rt_double import DoubleServer
from controller_program_p4info import documented_p4info

from controller.fabric import Fabric
from controller.jobs import JobManager
from controller.p4info import P4InfoHelper
from controller.program import P4inaProgram
from controller.state import ControllerState
from controller.topologies import leaf_spine
from controller.topology import Topology

Env = tuple[Topology, dict[str, DoubleServer], Fabric]


@contextmanager
def doubled_leaf_spine(hosts_per_leaf: int, leaves: int = 2, spines: int = 2) -> Iterator[Env]:
    """(topology, doubles by switch name, controller fabric connected to them); everything stopped on exit."""
    topo = leaf_spine(leaves=leaves, spines=spines, hosts_per_leaf=hosts_per_leaf)
    servers = {name: DoubleServer() for name in topo.switches}
    for name, s in servers.items():
        topo.switches[name].grpc = s.address
    fab = Fabric(topo, timeout=5)
    try:
        fab.push_pipeline(documented_p4info(), b"{}").raise_first()
        yield topo, servers, fab
    finally:
        fab.close()
        for s in servers.values():
            s.stop()


def job_manager(topo: Topology, fab: Fabric, helper: P4InfoHelper | None = None) -> JobManager:
    """A JobManager over `fab` with fresh controller state and the documented P4Info."""
    return JobManager(topo, fab, P4inaProgram(), helper or P4InfoHelper(documented_p4info()), ControllerState())
