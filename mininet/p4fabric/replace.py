"""`p4ina run --kill-worker H@T`: kill a worker mid-run and move its rank to a hot-standby host.

Detection: the runner launched the worker, so it is the job's scheduler; it sees the process exit (as a cluster
scheduler sees a rank's process or node die, without the dead process telling anyone) and asks the controller to
move the rank: `p4ina ctl job replace JOB DEAD SPARE` (the command's code, run in the runner's process), which reprograms the dead worker's leaf (the spare's port gets
its child index; a spare on another leaf changes the tree) and reads the dead child's cells there. The runner then
tells the spare's waiting process (a hot standby: started with the workers, everything imported) its arguments: the
dead rank, its child index, the dead rank's checkpoint (its protocol state before the call it was in) and those
cells (`p4fabric.spare`). Measured: the time from the kill to the first exact step result after it, on any rank.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from p4fabric.exceptions import RunError
from p4fabric.faults import FaultEvent
from p4fabric.report import WorkerResult


def default_spares(hosts: Sequence[str], workers: Sequence[str], given: Sequence[str]) -> list[str]:
    """`given`, or the first host that is not a worker."""
    if given:
        return list(given)
    rest = [h for h in hosts if h not in workers]
    if not rest:
        raise RunError("--kill-worker needs a spare host: every host runs a worker (lower --workers or give --spare)")
    return rest[:1]


def fixed_exponent() -> int:
    """The shared exponent of a run with spares: that of the largest |value| hostproc draws, so every call is one
    exchange (no agreement round, no prediction) and no sum saturates (quantize.frac_bits leaves n workers' room)."""
    from hostagent.quantize import block_exponent
    from p4fabric.hostproc import VALUE_RANGE

    return block_exponent(np.array([float(VALUE_RANGE)]))


class WorkerReplacer:
    """The kill-worker fault of one in-network mode: kills, replaces and records. `procs`/`outputs` are the mode's
    dicts by host; the spare's process and output take the dead host's entries (same keys), so the runner's wait
    loop and result reading follow the rank, not the host."""

    def __init__(self, runner: Any, run: Any, workers: list[str], spares: list[str], procs: dict[str, Any],
                 outputs: dict[str, Path]) -> None:
        self.runner, self.run, self.workers = runner, run, workers
        self.spares = list(spares)
        self.procs, self.outputs = procs, outputs
        self.replacing: set[str] = set()  # dead hosts whose exit is expected
        self.spare_of: dict[str, str] = {}
        self.first_outputs: dict[str, Path] = {}  # a replaced worker's own output (the steps it finished)
        self.records: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.standby: dict[str, Any] = {}  # spare -> its waiting process (`hostproc standby`)
        import controller.cli  # noqa: F401 - loaded now, not when a worker dies
        from p4fabric.runner import REPO

        for spare in self.spares:
            go = self.go_file(spare)
            go.unlink(missing_ok=True)
            self.standby[spare] = runner.fabric.popen(
                spare, [sys.executable, "-m", "p4fabric.hostproc", "standby", str(go)], name=f"{run.tag}-{spare}",
                log_file=runner.opts.out / "logs" / f"{run.tag}-{spare}.log", cwd=REPO)

    def go_file(self, spare: str) -> Path:
        return self.runner.opts.out / "workers" / f"{self.run.tag}-{spare}.go.json"

    def stop_standby(self) -> None:
        """Stop the spares that were never needed (their processes only waited)."""
        for spare, proc in self.standby.items():
            if spare in self.spare_of.values():
                continue
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.log_handle.close()

    def checkpoint(self, host: str) -> Path:
        return self.runner.opts.out / "workers" / f"{self.run.tag}-{host}.ckpt.json"

    def kill(self, event: FaultEvent) -> str:
        dead = event.target[0]
        if dead not in self.procs or dead in self.replacing:
            raise RunError(f"{dead} runs no worker of this mode")
        if not self.spares:
            raise RunError(f"no spare left for {dead}")
        spare = self._pick(dead)
        self.replacing.add(dead)
        proc = self.procs[dead]
        killed_at = time.time()
        proc.send_signal(signal.SIGKILL)
        proc.wait()  # the scheduler's view: the rank's process is gone
        detected = time.time()
        proc.log_handle.close()
        try:
            return self._move(dead, spare, killed_at, detected)
        except BaseException:
            self.replacing.discard(dead)  # no spare comes: the run treats the rank as failed
            raise

    def _move(self, dead: str, spare: str, killed_at: float, detected: float) -> str:
        r = self.runner
        job_id = r.job.job_id
        moved = self._replace(job_id, dead, spare)
        replaced = time.time()
        if moved.get("cells") is None:
            raise RunError(f"job {job_id}: the controller could not read {dead}'s cells on its switch (a spare "
                           "on another leaf, or no P4Runtime register reads): the spare cannot resume mid-step")
        cells_file = r.opts.out / "workers" / f"{self.run.tag}-{spare}.cells.json"
        cells_file.write_text(json.dumps(moved["cells"]))
        r.job.workers = list(moved["workers"])  # what `job show` would say now, without another ctl round trip
        r._configure_hosts([spare])
        rank = int(moved["rank"])
        output = r.opts.out / "workers" / f"{self.run.tag}-{spare}.jsonl"
        peers = [r.fabric.node(h).IP() for h in self.workers]
        argv = r._worker_argv(self.run, rank, spare, output, peers)
        argv += ["--resume", str(self.checkpoint(dead)), "--cells", str(cells_file),
                 "--checkpoint", str(self.checkpoint(spare))]
        go = self.go_file(spare)
        tmp = go.with_name(go.name + ".tmp")
        tmp.write_text(json.dumps(argv[3:]))  # hostproc's own arguments (without python -m p4fabric.hostproc)
        tmp.replace(go)
        started = self.standby[spare]
        with self.lock:
            self.first_outputs.setdefault(dead, self.outputs[dead])
            self.outputs[dead] = output
            self.procs[dead] = started
            self.spare_of[dead] = spare
        launched = time.time()
        self.records.append({"dead": dead, "spare": spare, "rank": rank, "job": job_id, "killed_at": killed_at,
                             "detect_ms": _ms(detected - killed_at), "replace_ms": _ms(replaced - detected),
                             "controller_ms": moved.get("replace_ms"), "spare_started_ms": _ms(launched - killed_at),
                             "same_switch": moved.get("same_switch")})
        return (f"worker {dead} (rank {rank}) killed; rank moved to {spare} by the controller in "
                f"{_ms(replaced - detected):.0f} ms ({'same leaf' if moved.get('same_switch') else 'tree changed'})"
                f", spare started {_ms(launched - killed_at):.0f} ms after the kill")

    def _replace(self, job_id: int, dead: str, spare: str) -> dict[str, Any]:
        """`p4ina ctl job replace JOB DEAD SPARE --json`, run in this process (the command's own code, on the run's
        controller state, under its lock; its session takes mastership and gives it back to the watcher when it
        closes): a new Python process would add seconds of start-up to the replacement on a loaded machine."""
        import argparse

        from controller.cli import _job_replace
        from controller.exceptions import ControllerError

        state_file = self.runner.ctl.state_file
        app = self._app(state_file)
        try:
            moved: dict[str, Any] = _job_replace(argparse.Namespace(job_id=job_id, dead=dead, spare=spare), app)
        except ControllerError as exc:
            raise RunError(f"controller: {exc}") from None
        finally:
            with open(self.runner.ctl.dir / "commands.log", "a") as log:
                log.write(f"$ p4ina ctl job replace {job_id} {dead} {spare} (in the runner)\n")
        return json.loads(json.dumps(moved, default=str))

    @staticmethod
    def _app(state_file: Path) -> Any:
        from controller.app import ControllerApp

        return ControllerApp(state_file, timeout=5.0)

    def _pick(self, dead: str) -> str:
        """A spare on the dead worker's leaf first (its child index carries over: exact mid-step)."""
        leaf = self.runner.job.worker(dead)["switch"]
        hosts = self.runner.fabric.topo
        here = [s for s in self.spares if _leaf_of(hosts, s) == leaf]
        spare = (here or self.spares)[0]
        self.spares.remove(spare)
        return spare

    def finish(self) -> dict[str, Any]:
        """Per replacement: the time from the kill to the first exact step result after it (any rank), whether every
        step after it was exact, and what the spare resumed."""
        outputs = list(self.outputs.values())
        steps = [rec for path in outputs for rec in read_records(path) if "t" in rec]
        for record in self.records:
            after = [s for s in steps if s["t"] > record["killed_at"]]
            exact_after = [s["t"] for s in after if s.get("exact")]
            record["first_exact_ms"] = _ms(min(exact_after) - record["killed_at"]) if exact_after else None
            record["steps_after"] = len(after)
            record["all_exact_after"] = bool(after) and all(s.get("exact") for s in after)
            final = next((rec for rec in read_records(self.outputs[record["dead"]]) if rec.get("done")), {})
            record["spare_resumed"] = final.get("resumed")
            record["spare_error"] = final.get("error", "")
        return {"replacements": self.records}

    def with_first_steps(self, result: WorkerResult, worker: str) -> WorkerResult:
        """A replaced rank's result: the steps its first worker finished before it died, then the spare's (which
        resumed at the interrupted step); exact only if those earlier steps were too."""
        first = self.first_outputs.get(worker)
        if first is None:
            return result
        resumed = [int(rec["step"]) for rec in read_records(self.outputs[worker]) if "seconds" in rec and "step" in rec]
        start = min(resumed, default=len(result.step_seconds))
        done = [rec for rec in read_records(first) if "seconds" in rec and int(rec.get("step", start)) < start]
        return dataclasses.replace(
            result, step_seconds=[float(rec["seconds"]) for rec in done] + list(result.step_seconds),
            exact=result.exact and all(rec.get("exact") for rec in done),
            within_bound=result.within_bound and all(rec.get("within_bound") for rec in done))

    def host_of(self, host: str) -> str:
        return self.spare_of.get(host, host)


def _leaf_of(topo: Any, host: str) -> str:
    for a, b in topo.links():
        if a == host and topo.isSwitch(b):
            return str(b)
        if b == host and topo.isSwitch(a):
            return str(a)
    return ""


def read_records(path: Path) -> list[dict[str, Any]]:
    """A worker's JSON-lines output, the lines written so far (a killed worker's last line may be cut short)."""
    out: list[dict[str, Any]] = []
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)
