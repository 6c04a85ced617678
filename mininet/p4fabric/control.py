"""The controller of a run is the real one, as an operator would run it: `p4ina ctl` commands (pipeline push with
forwarding, job create, link down/up) on a state file private to the run, and `p4ina ctl watch` running for the
whole job, which notices a dead switch on its own (its P4Runtime stream breaks) and rebuilds the job's tree. This
module only starts those commands and reads their JSON output and the controller's event log."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4fabric.exceptions import RunError
from p4ina.targets.process import OWNER_ENV


@dataclass
class JobInfo:
    """What the runner needs of a job: its id, and per worker host the parameters of its `Worker`."""

    job_id: int
    slots: int
    workers: list[dict[str, Any]]  # host, rank, switch, port, child_index, ip, mac
    tree: dict[str, Any] = field(default_factory=dict)
    grants: dict[str, dict[str, int]] = field(default_factory=dict)
    scale: int = 0  # the job's scale exponent E: workers quantize in units of 2**E (docs/protocol.md)
    values: int = 64  # values per packet: the N of the pipeline the job runs on (workers pack as many)

    def worker(self, host: str) -> dict[str, Any]:
        for w in self.workers:
            if w["host"] == host:
                return w
        raise RunError(f"host {host} is not a worker of job {self.job_id}")


class FabricController:
    """`p4ina ctl` for one run: state and event log in `<out>/controller/`, `watch` started by `start_watch()`.

    A run's switches are new, so a state file or event log left in `<out>` by an earlier run is removed: its jobs
    and slot grants describe switches that no longer exist (kept, they piled up until a job found no free slots)."""

    def __init__(self, out_dir: Path, topology_file: Path, p4info: Path, device_config: Path, *,
                 owner: str = "p4ina", pid_file: Path | None = None, timeout: float = 180.0) -> None:
        self.dir = out_dir / "controller"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.state_file = self.dir / "state.json"
        self.events_file = self.dir / "events.jsonl"
        self.watch_log = self.dir / "watch.log"
        for stale in (self.state_file, self.events_file, self.watch_log):
            stale.unlink(missing_ok=True)
        self.topology_file = topology_file
        self.p4info = p4info
        self.device_config = device_config
        self.owner = owner
        self.pid_file = pid_file
        self.timeout = timeout
        self._watch: subprocess.Popen[bytes] | None = None
        self._topology: Any = None

    # -- commands --

    def ctl(self, *args: str, timeout: float | None = None) -> dict[str, Any]:
        """Run `p4ina ctl ARGS --state FILE --json`; its JSON answer, or RunError with its one-line error."""
        argv = [sys.executable, "-m", "p4ina", "ctl", *args, "--state", str(self.state_file), "--json"]
        env = dict(os.environ, **{OWNER_ENV: self.owner})
        limit = timeout or self.timeout
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=limit, env=env, check=False)
        except subprocess.TimeoutExpired:
            raise RunError(f"p4ina ctl {' '.join(args[:2])} did not answer within {limit:g} s") from None
        with open(self.dir / "commands.log", "a") as log:
            log.write(f"$ p4ina ctl {' '.join(args)}\n{result.stdout}{result.stderr}\n")
        if result.returncode != 0:
            lines = (result.stderr or result.stdout).strip().splitlines()
            raise RunError(f"controller: {lines[-1] if lines else f'p4ina ctl exited {result.returncode}'}")
        try:
            data = json.loads(result.stdout)
        except json.JSONDecodeError:
            raise RunError(f"controller: p4ina ctl {' '.join(args[:2])} printed no JSON") from None
        return data if isinstance(data, dict) else {"value": data}

    def push_pipeline(self, *, uplinks: str = "ecmp", rpc_timeout: float | None = None) -> None:
        """Pipeline and forwarding to every switch (the controller installs routes right after the pipeline), with
        per-flow ECMP or per-packet spraying over equal-cost uplinks. `rpc_timeout`: the per-RPC deadline (a
        pipeline built for many values per packet takes an embedded switch longer to load)."""
        extra = ["--timeout", f"{rpc_timeout:g}"] if rpc_timeout is not None else []
        out = self.ctl("pipeline", "push", "--topology", str(self.topology_file), "--p4info", str(self.p4info),
                       "--config", str(self.device_config), "--uplinks", uplinks, *extra,
                       timeout=None if rpc_timeout is None else max(self.timeout, rpc_timeout + 60))
        if out.get("errors"):
            switch, error = sorted(out["errors"].items())[0]
            raise RunError(f"controller could not push the pipeline to {switch}: {error}")

    def create_job(self, hosts: list[str], *, slots: int, quant: str = "int32", values: int | None = None) -> JobInfo:
        extra = ["--values", str(values)] if values is not None else []
        created = self.ctl("job", "create", *hosts, "--slots", str(slots), "--quant", quant, *extra)
        return self.job(int(created["job"]))

    def job(self, job_id: int) -> JobInfo:
        shown = self.ctl("job", "show", str(job_id))
        tree = self.ctl("tree", "show", str(job_id))
        grants = {sw: {"slot_base": int(g["slot_base"]), "slot_count": int(g["slot_count"])}
                  for sw, g in (shown.get("grants") or {}).items()}
        return JobInfo(job_id, int(shown["slots"]), list(shown["workers"]),
                       {k: tree[k] for k in ("root", "parent", "member_switch", "members", "depth") if k in tree},
                       grants, int(shown.get("scale", 0)), int(shown.get("values", 64)))

    def link(self, a: str, b: str, *, up: bool) -> str:
        out = self.ctl("link", "up" if up else "down", a, b)
        return "; ".join(_describe(e) for e in out.get("events", [])) or "no change"

    def switch_address(self, switch: str) -> tuple[str, str]:
        if self._topology is None:
            from controller.topology import Topology

            self._topology = Topology.load(self.topology_file)
        ip, mac = self._topology.switch_address(switch)
        return str(ip), str(mac)

    # -- the long-running controller --

    def start_watch(self, probe_interval: float = 0.5, timeout: float = 60.0) -> None:
        argv = [sys.executable, "-m", "p4ina", "ctl", "watch", "--state", str(self.state_file),
                "--probe-interval", f"{probe_interval:g}"]
        env = dict(os.environ, **{OWNER_ENV: self.owner})
        with open(self.watch_log, "ab") as log:
            self._watch = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
        if self.pid_file is not None:
            self.pid_file.write_text(f"{self._watch.pid}\n")
        deadline = time.monotonic() + timeout
        while b"watching" not in self.watch_log.read_bytes():
            if self._watch.poll() is not None or time.monotonic() > deadline:
                tail = self.watch_log.read_text(errors="replace").strip().splitlines()[-3:]
                raise RunError("the controller's watcher did not start: " + (" | ".join(tail) or "no output"))
            time.sleep(0.1)

    def stop_watch(self) -> None:
        proc, self._watch = self._watch, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)  # its clean exit path (closes the streams)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.pid_file is not None:
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()

    def events(self, since: float = 0.0) -> list[dict[str, Any]]:
        if not self.events_file.exists():
            return []
        out = []
        for line in self.events_file.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                event = json.loads(line)
                if float(event.get("time", 0)) >= since:
                    out.append(event)
        return out

    def wait_for_recovery(self, switch: str, since: float, timeout: float = 30.0) -> str:
        """After a switch died: what the watcher did about it (switch lost, then each job rebuilt or degraded)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            events = self.events(since)
            lost = [e for e in events if e.get("kind") == "switch_lost" and e.get("switch") == switch]
            outcome = [e for e in events if e.get("kind") in ("job_rebuilt", "job_degraded")
                       and switch in str(e.get("detail", ""))]
            if lost and outcome:
                return "; ".join(_describe(e) for e in [lost[0], *outcome])
            if lost and time.monotonic() > deadline - timeout / 2:
                return _describe(lost[0]) + " (no job used it)"
            time.sleep(0.1)
        raise RunError(f"the controller did not report the loss of {switch} within {timeout:g} s")

    def close(self) -> None:
        self.stop_watch()


def _describe(event: dict[str, Any]) -> str:
    kind = str(event.get("kind", "?"))
    data = event.get("data") or {}
    if kind == "job_rebuilt":
        return (f"job {event.get('job')} rebuilt, root {data.get('root')}, "
                f"{data.get('recovery_ms', '?')} ms after detection")
    if kind == "switch_lost":
        return f"switch {event.get('switch')} lost ({event.get('detail', '')})".replace(" ()", "")
    parts = [kind, str(event.get("switch") or ""), str(event.get("detail") or "")]
    return " ".join(p for p in parts if p)
