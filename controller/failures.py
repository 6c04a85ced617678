"""Failure handling: notice lost switches and links, move affected jobs onto new trees, restore returning switches.

`Watcher` is the long-running part of the controller (`p4ina ctl watch`). It keeps a stream open to every switch;
a stream that breaks, or a switch that misses the deadline of the periodic health check (a hung switch whose
connection stays open), marks the switch down, and every job whose tree used it is
rebuilt on the live topology while host agents keep retransmitting. Down switches are probed; one that answers
again gets the pipeline, its forwarding entries and the entries of the jobs that use it. Link failures come from
the operator or the emulation (`ctl link down A B`) because P4Runtime 1.4 has no port-status notification.
Each state change is one transaction on the persisted state, so CLI commands in between see it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from controller.app import ControllerApp, Session
from controller.client import StreamEvent
from controller.events import Event, from_stream
from controller.exceptions import ControllerError, SwitchUnavailableError
from controller.fabric import Fabric
from controller.p4info import P4InfoHelper
from controller.topology import Topology

log = logging.getLogger(__name__)


def _down_sets(s: Session) -> tuple[set[str], set[tuple[str, str]]]:
    return set(s.state.down_switches), {(a, b) for a, b in s.state.down_links}


def rebuild_affected(s: Session, jobs: list[int], cause: str, detected: float) -> list[Event]:
    """Rebuild each job; a job that cannot be placed is marked degraded (it comes back with the switch)."""
    out = []
    manager = s.jobs
    for job_id in jobs:
        try:
            rec = manager.rebuild(job_id)
            ms = (time.time() - detected) * 1000
            out.append(Event("job_rebuilt", job=job_id, detail=cause,
                             data={"root": rec.tree.root, "switches": len(rec.tree.parent),
                                   "recovery_ms": round(ms, 1)}))
        except ControllerError as exc:
            s.state.jobs[job_id].status = "degraded"
            out.append(Event("job_degraded", job=job_id, detail=f"{cause}: {exc}"))
    return out


def switch_down(s: Session, switch: str, reason: str, detected: float | None = None) -> list[Event]:
    detected = detected or time.time()
    if switch in s.state.down_switches:
        return []
    before = _down_sets(s)
    s.state.down_switches.append(switch)
    events = [Event("switch_lost", switch, detail=reason)]
    s.fabric.client(switch).close()
    events += rebuild_affected(s, s.jobs.affected(switch=switch), f"switch {switch} lost", detected)
    rerouted = s.reroute(before)
    events += [Event("error", sw, detail=f"rerouting failed: {err}") for sw, err in sorted(rerouted.errors.items())]
    return events


def switch_up(s: Session, switch: str) -> list[Event]:
    if switch not in s.state.down_switches:
        return []
    before = _down_sets(s)
    s.state.down_switches.remove(switch)
    written = s.restore_switches([switch], pipeline=True)
    written.raise_first()
    s.reroute(before, [sw for sw in s.topo.switches if sw != switch]).raise_first()  # it has fresh routes already
    events = [Event("switch_back", switch, data={"entities": written.results.get(switch, 0)})]
    degraded = [j for j, r in sorted(s.state.jobs.items()) if r.status == "degraded"]
    events += rebuild_affected(s, degraded, f"switch {switch} back", time.time())
    return events


def link_change(s: Session, a: str, b: str, *, up: bool) -> list[Event]:
    topo = s.topo
    if a not in topo.switches or b not in topo.switches:
        raise ControllerError(f"unknown switch in link {a}-{b}")
    if not topo.graph(include_hosts=False).has_edge(a, b):
        raise ControllerError(f"no link between {a} and {b} in the topology")
    before = _down_sets(s)
    pair = sorted((a, b))
    present = pair in [sorted(x) for x in s.state.down_links]
    if up and present:
        s.state.down_links = [x for x in s.state.down_links if sorted(x) != pair]
    elif not up and not present:
        s.state.down_links.append(pair)
    else:
        return []
    events = [Event("link_up" if up else "link_down", detail=f"{pair[0]}-{pair[1]}")]
    if up:
        jobs = [j for j, r in sorted(s.state.jobs.items()) if r.status == "degraded"]
    else:
        jobs = s.jobs.affected(link=(a, b))
    events += rebuild_affected(s, jobs, f"link {pair[0]}-{pair[1]} {'up' if up else 'down'}", time.time())
    rerouted = s.reroute(before)
    events += [Event("error", sw, detail=f"rerouting failed: {err}") for sw, err in sorted(rerouted.errors.items())]
    return events


class Watcher:
    """Streams to every switch; reacts to their loss and return. `run()` until `stop` is set."""

    def __init__(self, app: ControllerApp, topo: Topology, *, probe_interval: float = 1.0) -> None:
        self.app = app
        self.probe_interval = probe_interval
        self.queue: queue.Queue[StreamEvent] = queue.Queue()
        self.fabric = Fabric(topo, timeout=app.timeout, on_event=self.queue.put)
        self.stop = threading.Event()
        self.helper: P4InfoHelper | None = None

    def _apply(self, fn: Callable[..., list[Event]], *args: object) -> list[Event]:
        with self.app.session(fabric=self.fabric) as s:
            events = fn(s, *args)
        for ev in events:
            self.app.events.emit(ev)
        return events

    def _helper(self) -> P4InfoHelper | None:
        """The pipeline's P4Info (digest names and fields), once known."""
        if self.helper is None:
            try:
                with self.app.session(fabric=self.fabric) as s:
                    self.helper = s.helper if s.state.p4info else None
            except ControllerError:
                return None
        return self.helper

    def start(self) -> None:
        """Connect to every switch not already known to be down; unreachable ones are marked down."""
        with self.app.session(fabric=self.fabric) as s:
            down = set(s.state.down_switches)
        for sw in sorted(self.fabric.topo.switches):
            if sw in down:
                continue
            try:
                self.fabric.connected(sw)
            except SwitchUnavailableError as exc:
                self._apply(switch_down, sw, str(exc))

    def step(self, timeout: float) -> None:
        try:
            ev = self.queue.get(timeout=timeout)
        except queue.Empty:
            self.probe()
            self.health_check()
            return
        if ev.kind == "stream_closed":
            try:
                self._apply(switch_down, ev.switch, ev.detail, ev.time)
            except ControllerError as exc:
                self.app.events.emit(Event("error", ev.switch, detail=str(exc)))
            return
        converted = from_stream(ev, self._helper())
        if converted is not None:
            self.app.events.emit(converted)

    def probe(self) -> None:
        with self.app.session(fabric=self.fabric) as s:
            down = list(s.state.down_switches)
        for sw in down:
            try:
                self.fabric.client(sw).connect()
            except ControllerError:
                continue
            try:
                self._apply(switch_up, sw)
            except ControllerError as exc:
                self.app.events.emit(Event("error", sw, detail=f"restoring failed: {exc}"))

    def health_check(self) -> None:
        """A cheap RPC to every connected switch: one that hangs (its stream still open) misses the deadline and is
        treated as lost."""
        with self.app.session(fabric=self.fabric) as s:
            down = set(s.state.down_switches)
        live = [sw for sw in sorted(self.fabric.topo.switches)
                if sw not in down and self.fabric.client(sw).connected]
        out = self.fabric.run(lambda c: c.capabilities(), live, connect=False)
        for sw, err in sorted(out.errors.items()):
            if isinstance(err, SwitchUnavailableError):
                try:
                    self._apply(switch_down, sw, f"health check: {err}")
                except ControllerError as exc:
                    self.app.events.emit(Event("error", sw, detail=str(exc)))

    def run(self) -> None:
        self.start()
        while not self.stop.is_set():
            self.step(self.probe_interval)
        self.fabric.close()
