"""The controller as the CLI (and the failure watcher) uses it: state, topology, pipeline, fabric, jobs.

A `Session` is one command's view: it loads the persisted state under a lock, opens switch connections only
when needed, and saves the state when it ends without error. Pipeline files are recorded so later commands (and
a switch that comes back) use the same P4Info and device config.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from controller.client import SwitchClient, update
from controller.events import Event, EventLog
from controller.exceptions import ControllerError, StateError
from controller.fabric import Fabric, FanOut
from controller.forwarding import FabricProgrammer
from controller.jobs import JobManager, diff_updates, from_text
from controller.p4info import P4InfoHelper, load_p4info
from controller.program import P4inaProgram
from controller.state import UPLINK_MODES, ControllerState, StateStore
from controller.topology import Topology


class Session:
    def __init__(self, state: ControllerState, events: EventLog, *, timeout: float, program: P4inaProgram,
                 fabric: Fabric | None = None) -> None:
        self.state = state
        self.events = events
        self.timeout = timeout
        # the uplink mode is fabric state (set by `pipeline push --uplinks`): every later reroute keeps it
        self.program = replace(program, spray=state.uplinks == "spray")
        self._fabric = fabric
        self._topo: Topology | None = fabric.topo if fabric is not None else None
        self._helper: P4InfoHelper | None = None

    # -- lazily loaded parts ----------------------------------------------------------------------------------
    @property
    def topo(self) -> Topology:
        if self._topo is None:
            if not self.state.topology:
                raise StateError("no topology: give --topology FILE once (it is remembered)")
            self._topo = Topology.load(self.state.topology)
        return self._topo

    @property
    def fabric(self) -> Fabric:
        if self._fabric is None:
            self._fabric = Fabric(self.topo, timeout=self.timeout)
        return self._fabric

    @property
    def helper(self) -> P4InfoHelper:
        if self._helper is None:
            if self.state.p4info:
                self._helper = P4InfoHelper(load_p4info(self.state.p4info))
            else:
                live = [s for s in sorted(self.topo.switches) if s not in self.state.down_switches]
                if not live:
                    raise StateError("no pipeline recorded and no live switch to ask: run `ctl pipeline push`")
                self._helper = self.fabric.connected(live[0]).load_pipeline_helper()
        return self._helper

    @property
    def jobs(self) -> JobManager:
        return JobManager(self.topo, self.fabric, self.program, self.helper, self.state)

    def programmer(self) -> FabricProgrammer:
        return FabricProgrammer(self.topo, self.helper, self.program, self.state.down_switches,
                                [(a, b) for a, b in self.state.down_links])

    def close(self) -> None:
        if self._fabric is not None:
            self._fabric.close()

    # -- fabric programming -----------------------------------------------------------------------------------
    def set_uplinks(self, mode: str) -> None:
        """Choose per-flow ECMP or per-packet spraying over equal-cost uplinks for the routes installed from now on
        (a push, a reroute); persisted with the state."""
        if mode not in UPLINK_MODES:
            raise ControllerError(f"uplink mode {mode!r}: use one of {', '.join(UPLINK_MODES)}")
        self.state.uplinks = mode
        self.program = replace(self.program, spray=mode == "spray")

    def push_pipeline(self, p4info_path: str, config_path: str, switches: Iterable[str] | None = None,
                      forwarding: bool = True) -> FanOut[None]:
        try:
            config = Path(config_path).read_bytes()
        except OSError as exc:
            raise StateError(f"cannot read device config {config_path}: {exc.strerror}") from None
        info = load_p4info(p4info_path)
        self.state.p4info = str(Path(p4info_path).resolve())
        self.state.device_config = str(Path(config_path).resolve())
        self._helper = P4InfoHelper(info)
        names = sorted(switches if switches is not None else self.topo.switches)
        out = self.fabric.push_pipeline(info, config, names)
        for sw in out.results:
            if sw not in self.state.pipeline_pushed:
                self.state.pipeline_pushed.append(sw)
            self.events.emit(Event("pipeline_pushed", sw, detail=Path(p4info_path).name))
        if forwarding:
            restored = self.restore_switches(list(out.results), pipeline=False)
            for sw, err in restored.errors.items():
                out.errors[sw] = err
                out.results.pop(sw, None)
        return out

    def restore_switches(self, switches: list[str], *, pipeline: bool = True) -> FanOut[int]:
        """Bring switches to what the controller intends: pipeline (when asked), forwarding, and the entities
        of every job whose tree uses them. Returns the number of entities written per switch."""
        if pipeline:
            if not (self.state.p4info and self.state.device_config):
                raise StateError("no pipeline recorded: run `ctl pipeline push` first")
            config = Path(self.state.device_config).read_bytes()
            self.fabric.push_pipeline(self.helper.p4info, config, switches).raise_first()
        programmer = self.programmer()
        routes = programmer.routes()

        def write(c: SwitchClient) -> int:
            ents = programmer.entities(c.name, routes)
            for rec in self.state.jobs.values():
                ents += [from_text(t) for t in rec.installed.get(c.name, [])]
            c.write([update("INSERT", e) for e in ents])
            return len(ents)

        return self.fabric.run(write, switches)

    def reroute(self, before_down: tuple[set[str], set[tuple[str, str]]],
                switches: Iterable[str] | None = None) -> FanOut[int]:
        """Replace the forwarding entries of live switches after a topology change: `before_down` is the failed
        switches and links the current entries were computed for. MODIFY where the key stays, INSERT/DELETE for
        the rest; job entries are left alone."""
        programmer = self.programmer()
        old = self.programmer_for(*before_down)
        routes, old_routes = programmer.routes(), old.routes()

        def write(c: SwitchClient) -> int:
            ups = diff_updates(old.entities(c.name, old_routes), programmer.entities(c.name, routes))
            c.write(ups)
            return len(ups)

        names = switches if switches is not None else self.topo.switches
        live = [s for s in sorted(names) if s not in self.state.down_switches]
        return self.fabric.run(write, live)

    def programmer_for(self, down_switches: set[str], down_links: set[tuple[str, str]]) -> FabricProgrammer:
        return FabricProgrammer(self.topo, self.helper, self.program, down_switches, down_links)


class ControllerApp:
    """Entry point: `with app.session() as s: ...` loads state, runs, saves."""

    def __init__(self, state_path: str | Path | None = None, *, timeout: float = 5.0,
                 program: P4inaProgram | None = None) -> None:
        self.store = StateStore(state_path)
        self.events = EventLog(self.store.path.with_name("events.jsonl"))
        self.timeout = timeout
        self.program = program or P4inaProgram()

    @contextmanager
    def session(self, topology: str | None = None, fabric: Fabric | None = None) -> Iterator[Session]:
        with self.store.transaction() as state:
            if topology is not None:
                Topology.load(topology)  # validate before remembering it
                state.topology = str(Path(topology).resolve())
            s = Session(state, self.events, timeout=self.timeout, program=self.program, fabric=fabric)
            try:
                yield s
            finally:
                if fabric is None:
                    s.close()


__all__ = ["ControllerApp", "ControllerError", "Session"]
