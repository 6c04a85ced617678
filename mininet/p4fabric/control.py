"""The controller as `p4ina run` drives it: the controller library (controller/) in this process, over P4Runtime
only, exactly as an operator's controller would drive real switches. This module is the one place that knows the
library's API: push the pipeline, install forwarding, create a job, and react to a failure by recomputing routes
and rebuilding the affected jobs' trees."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4fabric.exceptions import RunError


@dataclass
class JobInfo:
    """What the runner needs of a job: its id, and per worker host the parameters of its `Worker`."""

    job_id: int
    slots: int
    workers: list[dict[str, Any]]  # host, rank, switch, port, child_index, ip, mac
    tree: dict[str, Any] = field(default_factory=dict)
    grants: dict[str, dict[str, int]] = field(default_factory=dict)

    def worker(self, host: str) -> dict[str, Any]:
        for w in self.workers:
            if w["host"] == host:
                return w
        raise RunError(f"host {host} is not a worker of job {self.job_id}")


class FabricController:
    """The controller library bound to one emulated fabric. Thread-safe: fault injection calls in from a timer."""

    def __init__(self, topology_file: Path, p4info: Path, device_config: Path, *, timeout: float = 10.0) -> None:
        from controller.fabric import Fabric
        from controller.jobs import JobManager
        from controller.p4info import P4InfoHelper, load_p4info
        from controller.program import P4inaProgram
        from controller.state import ControllerState
        from controller.topology import Topology

        self.topo = Topology.load(topology_file)
        self.p4info = load_p4info(p4info)
        self.device_config = device_config.read_bytes()
        self.helper = P4InfoHelper(self.p4info)
        self.program = P4inaProgram()
        self.state = ControllerState()
        self.fabric = Fabric(self.topo, timeout=timeout)
        self.jobs = JobManager(self.topo, self.fabric, self.program, self.helper, self.state)
        self._routes: dict[str, list[Any]] = {}
        self._lock = threading.Lock()
        self.events: list[str] = []

    # -- set-up --

    def push_pipeline(self) -> None:
        self._check(self.fabric.push_pipeline(self.p4info, self.device_config), "push the pipeline")

    def install_forwarding(self) -> None:
        from controller.client import update
        from controller.routing import plan_routes

        routes = plan_routes(self.topo, down_switches=self.state.down_switches,
                             down_links=[(a, b) for a, b in self.state.down_links])
        wanted = {sw: [update("INSERT", e) for e in self.program.route_entities(self.helper, sw, rs, self.topo)]
                  for sw, rs in routes.items()}
        self._check(self.fabric.run(lambda c: c.write(wanted[c.name]), wanted), "install forwarding")
        self._routes = routes

    def switch_address(self, switch: str) -> tuple[str, str]:
        ip, mac = self.topo.switch_address(switch)
        return str(ip), str(mac)

    def create_job(self, hosts: list[str], *, slots: int, quant: str = "int32") -> JobInfo:
        with self._lock:
            record = self.jobs.create(hosts, quant=quant, slots=slots)
        return self._info(record)

    def job(self, job_id: int) -> JobInfo:
        return self._info(self.jobs.get(job_id))

    def _info(self, record: Any) -> JobInfo:
        return JobInfo(record.job_id, record.slots, [dict(w) for w in record.workers], record.tree.to_dict(),
                       {sw: {"slot_base": g.slot_base, "slot_count": g.slot_count}
                        for sw, g in record.grants.items()})

    # -- failures --

    def switch_down(self, switch: str) -> str:
        """A switch died: leave it out of the live topology and rebuild every job whose tree used it."""
        with self._lock:
            if switch not in self.state.down_switches:
                self.state.down_switches.append(switch)
            dead = self.fabric.clients.pop(switch, None)
            if dead is not None:
                dead.close()
            return self._rebuild(self.jobs.affected(switch=switch), f"switch {switch} down")

    def link_down(self, a: str, b: str) -> str:
        with self._lock:
            if [a, b] not in self.state.down_links and [b, a] not in self.state.down_links:
                self.state.down_links.append([a, b])
            return self._rebuild(self.jobs.affected(link=(a, b)), f"link {a}-{b} down")

    def _rebuild(self, job_ids: list[int], why: str) -> str:
        if not job_ids:
            message = f"{why}: no job used it"
        else:
            rebuilt = []
            for job_id in job_ids:
                record = self.jobs.rebuild(job_id)
                rebuilt.append(f"job {job_id} tree rebuilt, root {record.tree.root}")
            message = f"{why}: " + "; ".join(rebuilt)
        self.events.append(message)
        return message

    # -- telemetry and debugging --

    def register_name(self, short: str) -> str:
        return f"P4inaIngress.aggregation.{short}"

    def close(self) -> None:
        self.fabric.close()

    @staticmethod
    def _check(out: Any, what: str) -> None:
        if out.errors:
            first = sorted(out.errors.items())[0]
            raise RunError(f"controller could not {what} on {first[0]}: {first[1]}")
