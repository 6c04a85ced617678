"""Fabric programming beyond jobs: forwarding (L2/L3, ECMP/spray), clone sessions, and the PFC hook.

`FabricProgrammer.entities(switch)` is everything a switch needs before any job: written after a pipeline push
and re-written to a switch that comes back. Its output is recorded per switch in the controller state so that a
re-install replaces exactly what was there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2

from controller.client import entity
from controller.p4info import P4InfoHelper, clone_session
from controller.program import P4inaProgram
from controller.routing import Route, plan_routes
from controller.topology import Topology

CPU_MIRROR_SESSION = 100  # clone session to the CPU port, on switches that have one


@dataclass
class FabricProgrammer:
    topo: Topology
    helper: P4InfoHelper
    program: P4inaProgram = field(default_factory=P4inaProgram)
    down_switches: Iterable[str] = ()
    down_links: Iterable[tuple[str, str]] = ()

    def routes(self) -> dict[str, list[Route]]:
        return plan_routes(self.topo, down_switches=self.down_switches, down_links=self.down_links)

    def entities(self, switch: str, routes: dict[str, list[Route]] | None = None) -> list[p4runtime_pb2.Entity]:
        routes = routes if routes is not None else self.routes()
        out = self.clone_sessions(switch)
        out += self.digests()
        out += self.program.route_entities(self.helper, switch, routes.get(switch, []), self.topo)
        out += self.pfc_thresholds(switch)
        return out

    def clone_sessions(self, switch: str) -> list[p4runtime_pb2.Entity]:
        cpu = self.topo.switches[switch].cpu_port
        if cpu is None:
            return []
        return [entity(clone_session(CPU_MIRROR_SESSION, [(cpu, 0)]))]

    def digests(self) -> list[p4runtime_pb2.Entity]:
        """A DigestEntry for every digest of the program: a switch sends no digest lists without one."""
        return [entity(self.helper.digest_entry(d.preamble.name, max_timeout_ns=1_000_000, max_list_size=16))
                for d in self.helper.p4info.digests]

    def pfc_thresholds(self, switch: str) -> list[p4runtime_pb2.Entity]:
        """Xoff/Xon thresholds per port and priority. The program has no PFC tables yet (docs/p4-program.md:
        pause generation comes with the pause work); this is where their entries will be built."""
        return []
