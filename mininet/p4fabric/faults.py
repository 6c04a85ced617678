"""Fault injection for `p4ina run`: link impairments for the whole run (`--loss`, `--dup`) and timed events
(`--link-down A-B@T`, `--kill-switch S@T`, `--bitflip S@T`, `--kill-worker H@T`), T in seconds after the job
starts.

Parsing is separate from acting: `parse_*` turn options into a `FaultPlan`; `FaultInjector` runs the plan's events on
a timer thread against callbacks the runner supplies, and records what happened for the report.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from p4fabric.exceptions import FaultSpecError

_TIME = r"(?P<t>[0-9]+(?:\.[0-9]*)?)s?"


@dataclass(frozen=True, order=True)
class FaultEvent:
    """One timed fault. `kind`: link-down, link-up, kill-switch, bitflip or kill-worker; `target`: a switch or host
    name, or (a, b)."""

    at: float
    kind: str
    target: tuple[str, ...]

    def describe(self) -> str:
        what = "-".join(self.target)
        return f"{self.kind} {what} at {self.at:g} s"


@dataclass
class FaultPlan:
    loss_percent: float = 0.0
    dup_percent: float = 0.0
    events: list[FaultEvent] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.loss_percent or self.dup_percent or self.events)

    def link_options(self) -> dict[str, float]:
        """Mininet link options for the whole-run impairments (percentages, as Mininet takes them)."""
        opts: dict[str, float] = {}
        if self.loss_percent:
            opts["loss"] = self.loss_percent
        if self.dup_percent:
            opts["dup"] = self.dup_percent
        return opts

    def as_dict(self) -> dict[str, Any]:
        return {"loss_percent": self.loss_percent, "dup_percent": self.dup_percent,
                "events": [{"at": e.at, "kind": e.kind, "target": list(e.target)} for e in sorted(self.events)]}


def parse_percent(text: str | float | None, option: str) -> float:
    """`2`, `2%` or `2.5%` -> 2.0 (percent); 0 <= value < 100."""
    if text is None or text == "":
        return 0.0
    raw = str(text).strip()
    try:
        value = float(raw.removesuffix("%"))
    except ValueError:
        raise FaultSpecError(f"{option} {raw!r}: expected a percentage such as 2 or 2%") from None
    if not 0.0 <= value < 100.0:
        raise FaultSpecError(f"{option} {raw!r}: must be at least 0% and below 100%")
    return value


def parse_link_event(spec: str, kind: str = "link-down") -> FaultEvent:
    """`A-B@T`: the link between nodes A and B (node names may contain `_` but not `-`)."""
    match = re.fullmatch(rf"\s*(?P<a>[\w.]+)-(?P<b>[\w.]+)@{_TIME}\s*", spec)
    if not match:
        raise FaultSpecError(f"--{kind} {spec!r}: expected NODE-NODE@SECONDS, e.g. leaf1-spine1@2")
    if match["a"] == match["b"]:
        raise FaultSpecError(f"--{kind} {spec!r}: a link joins two different nodes")
    return FaultEvent(float(match["t"]), kind, (match["a"], match["b"]))


def parse_switch_event(spec: str, kind: str) -> FaultEvent:
    """`S@T`: switch S (or, for kill-worker, the worker on host S) at T seconds."""
    match = re.fullmatch(rf"\s*(?P<s>[\w.]+)@{_TIME}\s*", spec)
    if not match:
        example = "HOST@SECONDS, e.g. h2@1.5" if kind == "kill-worker" else "SWITCH@SECONDS, e.g. spine1@1.5"
        raise FaultSpecError(f"--{kind} {spec!r}: expected {example}")
    return FaultEvent(float(match["t"]), kind, (match["s"],))


def build_plan(*, loss: str | None = None, dup: str | None = None, link_down: Sequence[str] = (),
               link_up: Sequence[str] = (), kill_switch: Sequence[str] = (), bitflip: Sequence[str] = (),
               kill_worker: Sequence[str] = ()) -> FaultPlan:
    plan = FaultPlan(loss_percent=parse_percent(loss, "--loss"), dup_percent=parse_percent(dup, "--dup"))
    plan.events += [parse_link_event(s, "link-down") for s in link_down]
    plan.events += [parse_link_event(s, "link-up") for s in link_up]
    plan.events += [parse_switch_event(s, "kill-switch") for s in kill_switch]
    plan.events += [parse_switch_event(s, "bitflip") for s in bitflip]
    plan.events += [parse_switch_event(s, "kill-worker") for s in kill_worker]
    if len({e.target for e in plan.events if e.kind == "kill-worker"}) < len(kill_worker):
        raise FaultSpecError("--kill-worker names a host twice")
    plan.events.sort()
    return plan


def validate_plan(plan: FaultPlan, switches: Sequence[str], links: Sequence[tuple[str, str]],
                  hosts: Sequence[str] = ()) -> None:
    """Fail early (before building anything) when a fault names a node or link the topology does not have."""
    known = set(switches)
    pairs = {frozenset(link) for link in links}
    for event in plan.events:
        if event.kind == "kill-worker":
            if event.target[0] not in hosts:
                raise FaultSpecError(f"--kill-worker: no host {event.target[0]!r} in this topology")
        elif event.kind in ("link-down", "link-up"):
            if frozenset(event.target) not in pairs:
                raise FaultSpecError(f"--{event.kind}: no link {'-'.join(event.target)} in this topology")
        elif event.target[0] not in known:
            raise FaultSpecError(f"--{event.kind}: no switch {event.target[0]!r} in this topology "
                                 f"(switches: {', '.join(sorted(known))})")


@dataclass
class FaultRecord:
    event: FaultEvent
    fired_at: float
    outcome: str
    ok: bool

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.event.kind, "target": list(self.event.target), "planned_at": self.event.at,
                "fired_at": round(self.fired_at, 3), "ok": self.ok, "outcome": self.outcome}


Action = Callable[[FaultEvent], str]


class FaultInjector:
    """Fires the plan's events at their times (relative to `start()`), each through `actions[event.kind]`, which
    returns a one-line outcome. Errors are recorded, not raised: the run goes on and the report shows them."""

    def __init__(self, events: Sequence[FaultEvent], actions: dict[str, Action],
                 clock: Callable[[], float] = time.monotonic) -> None:
        missing = {e.kind for e in events} - set(actions)
        if missing:
            raise FaultSpecError(f"no way to inject {', '.join(sorted(missing))} here")
        self.events = sorted(events)
        self.actions = actions
        self.records: list[FaultRecord] = []
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def start(self) -> FaultInjector:
        self._t0 = self._clock()
        if self.events:
            self._thread = threading.Thread(target=self._run, name="p4ina-faults", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        for event in self.events:
            delay = self._t0 + event.at - self._clock()
            if delay > 0 and self._stop.wait(delay):
                return
            self.fire(event)

    def fire(self, event: FaultEvent) -> FaultRecord:
        fired = self._clock() - self._t0
        try:
            record = FaultRecord(event, fired, self.actions[event.kind](event), True)
        except Exception as exc:  # recorded for the report; the run continues
            record = FaultRecord(event, fired, f"{type(exc).__name__}: {exc}".splitlines()[0], False)
        self.records.append(record)
        return record

    def stop(self) -> list[FaultRecord]:
        """Stop firing; returns what fired (events not reached yet are simply not in the list)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        return list(self.records)
