"""`p4ina run --recovery compare` on the OCS fabric (`--topo ocs-leafspine,...`): a spine killed by `--kill-switch`
is recovered twice in one run, on the same fabric, and the two recoveries are reported side by side.

1. Re-patching: the runner acts for the controller's OCS agent. It kills the device serving the spine, moves that
   spine's circuits to a spare (`ocsfabric.plan_repatch`: the same leaf ports, so no leaf entry changes), points the
   spine's name in the controller's topology file at the spare, and restores the spine's state on it in this process
   with the controller's own code (`Session.restore_switches`: forwarding and every job's entries; the spares are
   hot: their pipeline is loaded before the pass starts). The watcher is stopped for this pass: it would reroute
   around the loss before the spare is in.
2. Rerouting: a fresh job (its own slots: its workers start again at step 0) on the same tree root, the watcher
   started again, and the same spine (now served by the spare) killed: the watcher rebuilds the trees over the
   surviving spines, as every other fabric does.

Each pass is one in-network mode in the report ("in-network (re-patch)", "in-network (reroute)") and
`faults.recoveries` holds, per pass: recovery time (kill -> state restored / tree rebuilt), the first exact step
result after the kill, the mean all-reduce step time of the steps that started after recovery, and whether every
step after the kill was exact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p4fabric.exceptions import RunError
from p4fabric.faults import FaultEvent
from p4fabric.ocsfabric import OCS_NAME, OcsLayout, ocs_of, plan_repatch
from p4fabric.replace import read_records
from p4fabric.report import RunReport
from p4fabric.runner import ModeRun, Runner

RECOVERIES = ("re-patch", "reroute")
PRELOAD_TIMEOUT = 300.0  # seconds for a spare's pipeline load (an embedded switch loads code per element)


@dataclass(frozen=True)
class RecoveryRun(ModeRun):
    """An in-network mode run under one recovery: its own report name and output files."""

    recovery: str = ""

    @property
    def name(self) -> str:
        return f"{super().name} ({self.recovery})"

    @property
    def tag(self) -> str:
        return f"{super().tag}-{self.recovery}"


def check_options(topo: Any, events: list[FaultEvent], reroute: bool = True) -> tuple[OcsLayout, str]:
    """The OCS layout and the spine to kill; refuses what this comparison cannot do."""
    layout = ocs_of(topo)
    if layout is None:
        raise RunError("--recovery compare needs an OCS fabric: --topo ocs-leafspine,L,S,H[,SPARES]")
    if layout.spares < 1:
        raise RunError("--recovery compare needs a spare spine on the OCS (ocs-leafspine,L,S,H,1)")
    if layout.spines < 2 and reroute:
        raise RunError("--recovery compare needs 2 spines at least: rerouting goes over a surviving one")
    kills = [e for e in events if e.kind == "kill-switch"]
    if len(kills) != 1 or len(events) != 1:
        raise RunError("--recovery compare takes exactly one fault: --kill-switch spineN@T")
    spine = kills[0].target[0]
    if spine not in layout.spine_names():
        raise RunError(f"--recovery compare: {spine} is not a spine ({', '.join(layout.spine_names())})")
    return layout, spine


class OcsRecoveryRunner(Runner):
    """A `Runner` whose faulted in-network mode runs twice: recovered by re-patching, then by rerouting."""

    def __init__(self, *args: Any, recoveries: tuple[str, ...] = RECOVERIES, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        unknown = set(recoveries) - set(RECOVERIES)
        if unknown or not recoveries:
            raise RunError(f"recoveries: choose from {', '.join(RECOVERIES)}, got {', '.join(recoveries)}")
        #: the passes, in order (both by default; a re-patch pass must come first: it needs the spine alive)
        self.recoveries = tuple(r for r in RECOVERIES if r in recoveries)
        self.recovery = ""
        #: logical spine -> the device (spine or spare) serving it now
        self.serving: dict[str, str] = {}
        self.records: dict[str, dict[str, Any]] = {}
        self.layout: OcsLayout | None = None

    def _run_mode(self, run: ModeRun, workers: list[str], report: RunReport, *, faults: bool = False) -> None:
        if not faults:
            super()._run_mode(run, workers, report)
            return
        assert self.fabric is not None and self.ctl is not None
        self.layout, spine = check_options(self.fabric.topo, self.opts.faults.events,
                                           "reroute" in self.recoveries)
        self.serving = {s: s for s in self.layout.spine_names()}
        used = set(self.ctl.job(self.job.job_id).tree.get("parent", {})) if self.job else set()
        if used and spine not in used:
            self.log(f"note: the job's tree does not use {spine} ({', '.join(sorted(used))})")
        for recovery in self.recoveries:
            self.recovery = recovery
            if recovery == "re-patch":
                self.ctl.stop_watch()  # the runner recovers this one; the watcher would reroute first
                self._preload_spares()
            else:
                self._new_job(workers, run.fmt or "int32", report)
                self.ctl.start_watch()
            tagged = RecoveryRun(run.mode, run.fmt, recovery)
            super()._run_mode(tagged, workers, report, faults=True)
            fired = report.faults.pop("fired", [])
            record = self.records.setdefault(recovery, {})
            record.update(self._after(tagged, workers, record))
            record["fired"] = fired
            if recovery == "re-patch":
                self.log(f"re-patch: {record.get('recovery_ms')} ms to restore {spine} on "
                         f"{self.serving[spine]}")
        report.faults["recoveries"] = self.records
        report.faults["ocs"] = {"reconfig_ms": self._ocs().reconfig_delay * 1000,
                                "circuits": [list(c) for c in self._ocs().table.circuits()],
                                "serving": dict(self.serving)}

    def _ocs(self) -> Any:
        assert self.fabric is not None
        ocs = self.fabric.node(OCS_NAME).ocs
        if ocs is None:
            raise RunError("the OCS is not running")
        return ocs

    # -- the kill, recovered one way or the other --

    def _kill_switch(self, event: FaultEvent) -> str:
        assert self.fabric is not None and self.ctl is not None
        spine = event.target[0]
        device = self.serving.get(spine, spine)
        record = self.records.setdefault(self.recovery, {})
        killed_at = time.time()
        record.update(spine=spine, device=device, killed_at=killed_at)
        self.fabric.switch(device).kill()
        if self.recovery == "reroute":
            outcome = self.ctl.wait_for_recovery(spine, killed_at)
            rebuilt = [e for e in self.ctl.events(killed_at) if e.get("kind") == "job_rebuilt"
                       and e.get("job") == (self.job.job_id if self.job else None)]
            if rebuilt:
                record["recovery_ms"] = round((float(rebuilt[0]["time"]) - killed_at) * 1000, 1)
            return f"switch {device} ({spine}) killed; controller: {outcome}"
        return self._repatch(spine, device, killed_at, record)

    def _repatch(self, spine: str, device: str, killed_at: float, record: dict[str, Any]) -> str:
        assert self.fabric is not None and self.ctl is not None and self.layout is not None
        taken = set(self.serving.values())
        spare = next((s for s in self.layout.spare_names() if s not in taken), None)
        if spare is None:
            raise RunError("no free spare spine on the OCS")
        ocs = self._ocs()
        plan = plan_repatch(self.layout, ocs.table.circuits(), device, spare)
        reconf = ocs.reconfigure(plan)
        patched_at = time.time()
        self._rename(spine, spare)
        self.serving[spine] = spare
        restored = self._restore(spine)
        done = time.time()
        record.update(spare=spare, ocs=reconf.as_dict(), repatched_ms=round((patched_at - killed_at) * 1000, 1),
                      entities=restored, recovery_ms=round((done - killed_at) * 1000, 1), recovered_at=done)
        return (f"switch {device} ({spine}) killed; OCS moved {len(reconf.added)} circuits to {spare} "
                f"({reconf.dark_seconds * 1000:.0f} ms dark); {spine} restored on {spare} ({restored} entities), "
                f"{record['recovery_ms']} ms after the kill")

    def _rename(self, spine: str, spare: str) -> None:
        """The controller's topology: `spine` is now answered by `spare`'s P4Runtime server."""
        from controller.topology import Topology

        assert self.fabric is not None
        path = self.opts.out / "topology.yaml"
        topo = Topology.load(path)
        node = self.fabric.switch(spare)
        topo.switches[spine].grpc = node.grpc_address
        topo.switches[spine].thrift = node.thrift_address or ""
        topo.save(path)

    def _preload_spares(self) -> None:
        """Hot spares: the pipeline is loaded on every spare before anything fails (as the surviving spines have it),
        so a re-patch writes only forwarding and job entries. Through a controller `Fabric` of the spares alone:
        they are not in the controller's topology until one takes a spine's name."""
        from controller.app import ControllerApp
        from controller.fabric import Fabric as SwitchClients
        from controller.topology import Topology

        assert self.ctl is not None and self.fabric is not None and self.layout is not None
        with ControllerApp(self.ctl.state_file, timeout=5.0).session() as s:
            p4info, config, tls = s.helper.p4info, Path(str(s.state.device_config)).read_bytes(), s.topo.tls
        spares = Topology(name="ocs-spares", kind="generic", tls=tls)
        for name in self.layout.spare_names():
            spares.add_switch(name, grpc=self.fabric.switch(name).grpc_address)
        clients = SwitchClients(spares, timeout=PRELOAD_TIMEOUT)
        try:
            clients.push_pipeline(p4info, config, self.layout.spare_names()).raise_first()
        finally:
            clients.close()

    def _restore(self, spine: str) -> int:
        """Pipeline, forwarding and the jobs' entries of `spine`, written by the controller's code in this process."""
        from controller.app import ControllerApp
        from controller.exceptions import ControllerError

        assert self.ctl is not None
        app = ControllerApp(self.ctl.state_file, timeout=5.0)
        try:
            with app.session() as s:
                out = s.restore_switches([spine], pipeline=False)  # loaded in advance (_preload_spares)
                out.raise_first()
                count = int(out.results.get(spine, 0))
        except ControllerError as exc:
            raise RunError(f"controller: {exc}") from None
        with open(self.ctl.dir / "commands.log", "a") as log:
            log.write(f"# restore {spine} on its spare (re-patch, in the runner): {count} entities\n")
        return count

    # -- measurements --

    def _after(self, run: RecoveryRun, workers: list[str], record: dict[str, Any]) -> dict[str, Any]:
        """From the workers' step records: steps every rank had finished at the kill (0: it landed in step 0),
        first exact result after the kill, steps after it all exact, and the mean step time of the steps that
        started after the recovery finished."""
        if "killed_at" not in record:
            return {"kill_fired": False}  # the job ended before the fault's time: nothing recovered
        killed = float(record["killed_at"])
        recovered = killed + float(record.get("recovery_ms", 0.0)) / 1000
        per_host = [[rec for rec in read_records(self.opts.out / "workers" / f"{run.tag}-{h}.jsonl")
                     if "t" in rec and "seconds" in rec] for h in workers]
        steps = [rec for recs in per_host for rec in recs]
        after = [s for s in steps if float(s["t"]) > killed]
        exact = [float(s["t"]) for s in after if s.get("exact")]
        clean = [float(s["seconds"]) for s in after if float(s["t"]) - float(s["seconds"]) >= recovered]
        done_at_kill = min((sum(1 for s in recs if float(s["t"]) <= killed) for recs in per_host), default=0)
        return {"steps_done_at_kill": done_at_kill,
                "first_exact_ms": round((min(exact) - killed) * 1000, 1) if exact else None,
                "steps_after": len(after), "all_exact_after": bool(after) and all(s.get("exact") for s in after),
                "step_s_after_recovery": round(sum(clean) / len(clean), 4) if clean else None,
                "steps_after_recovery": len(clean)}
