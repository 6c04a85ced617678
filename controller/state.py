"""Persisted controller state, so that `p4ina ctl` invocations (separate processes) share jobs and fabric facts.

One JSON file, written atomically (temporary file + rename) under an exclusive `fcntl` lock held for the whole
read-modify-write of a command. It records the topology file, the pipeline files, failed switches and links, and
every job with what it installed on each switch (P4Runtime entities in text format, so `delete` removes exactly
those). Resource pools are derived from the jobs, never stored separately.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from controller.exceptions import StateError
from controller.resources import Grant
from controller.trees import ReductionTree

STATE_VERSION = 1
ENV_STATE = "P4INA_CTL_STATE"


def default_state_path() -> Path:
    env = os.environ.get(ENV_STATE)
    return Path(env) if env else Path.home() / ".p4ina" / "controller.json"


@dataclass
class JobRecord:
    job_id: int
    name: str
    members: list[str]
    quant: str
    slots: int
    requested_root: str | None
    tree: ReductionTree
    grants: dict[str, Grant]
    ranks: list[str]
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)  # switch -> SwitchJobPlan.to_dict()
    installed: dict[str, list[str]] = field(default_factory=dict)  # switch -> Entity text protos, install order
    scale: int = 0
    workers: list[dict[str, Any]] = field(default_factory=list)  # plan.MemberInfo per rank: switch, child index
    worker_ports: dict[str, int] = field(default_factory=dict)
    status: str = "active"  # active, degraded (a switch of the tree is down and no tree could be rebuilt)
    created: float = 0.0
    rebuilt: int = 0
    uncleared: list[str] = field(default_factory=list)  # switches whose granted slots could not be cleared (BMv2)
    values: int = 64  # values per packet: the N of the pipeline the job was created on (its workers pack as many)
    spares: list[str] = field(default_factory=list)  # hot-standby hosts, in the order replacements take them
    replaced: list[dict[str, Any]] = field(default_factory=list)  # replacements so far: dead, spare, rank, when

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("tree", "grants")}
        d["tree"] = self.tree.to_dict()
        d["grants"] = {sw: asdict(g) for sw, g in self.grants.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JobRecord:
        d = dict(d)
        d["tree"] = ReductionTree.from_dict(d["tree"])
        d["grants"] = {sw: Grant(**g) for sw, g in d["grants"].items()}
        return cls(**d)


UPLINK_MODES = ("ecmp", "spray")


@dataclass
class ControllerState:
    topology: str | None = None
    p4info: str | None = None
    device_config: str | None = None
    down_switches: list[str] = field(default_factory=list)
    down_links: list[list[str]] = field(default_factory=list)
    jobs: dict[int, JobRecord] = field(default_factory=dict)
    pipeline_pushed: list[str] = field(default_factory=list)
    uplinks: str = "ecmp"  # how routes use equal-cost uplinks: "ecmp" (hash per flow) or "spray" (per packet)

    def next_job_id(self) -> int:
        return max(self.jobs, default=0) + 1

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "jobs"}
        d["version"] = STATE_VERSION
        d["jobs"] = {str(j): rec.to_dict() for j, rec in sorted(self.jobs.items())}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ControllerState:
        if d.get("version") != STATE_VERSION:
            raise StateError(f"controller state version {d.get('version')!r} is not {STATE_VERSION}")
        jobs = {int(k): JobRecord.from_dict(v) for k, v in d.get("jobs", {}).items()}
        rest = {k: v for k, v in d.items() if k not in ("jobs", "version")}
        return cls(jobs=jobs, **rest)


class StateStore:
    """The state file; use `with store.transaction() as state:` to read, change and save under a lock."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_state_path()

    def load(self) -> ControllerState:
        if not self.path.exists():
            return ControllerState()
        try:
            data = json.loads(self.path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise StateError(f"cannot read controller state {self.path}: {exc}") from None
        try:
            return ControllerState.from_dict(data)
        except (KeyError, TypeError) as exc:
            raise StateError(f"controller state {self.path} is malformed: {exc}") from None

    def save(self, state: ControllerState) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".controller-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(state.to_dict(), f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.path)

    @contextmanager
    def transaction(self) -> Iterator[ControllerState]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                state = self.load()
                yield state
                self.save(state)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
