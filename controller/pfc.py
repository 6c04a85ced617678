"""PFC, pause-storm watchdog and deadlock handling for p4src/p4ina.p4, over P4Runtime only.

What the data plane does is in docs/pfc.md. This module turns a per-switch PFC configuration into P4Runtime
updates (Xoff/Xon thresholds per egress port and class, per-port pause parameters and watchdog action, the clone
sessions that carry generated PFC frames), decodes the `pfc_event_t` digest into `PfcEvent`s, and runs the
deadlock policy: when a probe proves a cycle, drop on one queue of the cycle (`pfc_queue_drop`) so it drains, and
remove the entry after the restoration time. It needs one `SwitchClient` per switch and never imports the target.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from p4.v1 import p4runtime_pb2

from controller.encoding import decode_int
from controller.exceptions import ControllerError
from controller.p4info import P4InfoHelper, clone_session

log = logging.getLogger(__name__)

ING = "P4inaIngress.pfc"
EGR = "P4inaEgress.pfc_gen"
DIGEST = "pfc_event_t"
SESSION_BASE = 256  # PFC_SESSION_BASE in p4src/include/defines.p4: session 256 + p sends PFC frames out of port p
CLASSES = 8
QUANTUM_BITS = 512
WD_ACTIONS = {"drop": 0, "forward": 1, "alert": 2}
EVENT_KINDS = {1: "storm", 2: "restore", 3: "deadlock"}


class PfcError(ControllerError):
    """A PFC setting is out of range or refers to an unknown switch."""


def quantum_x65536(link_bps: float) -> int:
    """One pause quantum (512 bit times) in microseconds * 65536: the data plane's fixed-point pause unit."""
    if link_bps <= 0:
        raise PfcError(f"link speed must be positive, got {link_bps}")
    return max(1, round(QUANTUM_BITS / link_bps * 1e6 * 65536))


@dataclass(frozen=True)
class PortPfc:
    """Pause reception and watchdog settings of one port (SONiC PFCWD defaults: 200 ms, 200 ms, drop)."""

    port: int
    link_bps: float = 10e9
    detect_ms: float = 200.0
    restore_ms: float = 200.0
    action: str = "drop"
    deadlock_ms: float = 100.0  # 0 turns probes off for this port
    probe_interval_ms: float = 100.0
    hold_limit: int = 0  # recirculations a packet may be held for a paused queue (targets without MAC pause)
    backlog_xoff: int = 0  # pause propagation: packets reaching the paused queue before its senders are paused
    backlog_quanta: int = 0xFFFF

    def check(self) -> None:
        if not 0 <= self.port < 511:
            raise PfcError(f"port {self.port} outside 0..510")
        if self.action not in WD_ACTIONS:
            raise PfcError(f"watchdog action {self.action!r}: use one of {', '.join(WD_ACTIONS)}")
        for name in ("detect_ms", "restore_ms", "deadlock_ms", "probe_interval_ms"):
            value = getattr(self, name)
            if not 0 <= value * 1000 < 2**32:
                raise PfcError(f"port {self.port}: {name} = {value} outside 0..{(2**32 - 1) / 1000:.0f} ms")
        if not 0 <= self.hold_limit < 2**16:
            raise PfcError(f"port {self.port}: hold_limit {self.hold_limit} outside 0..65535")
        if not 0 <= self.backlog_xoff < 2**16 or not 0 < self.backlog_quanta < 2**16:
            raise PfcError(f"port {self.port}: backlog_xoff {self.backlog_xoff} outside 0..65535 or backlog_quanta "
                           f"{self.backlog_quanta} outside 1..65535")


@dataclass(frozen=True)
class QueueThresholds:
    """Xoff/Xon of one egress queue in packets of depth, and the pause time sent at Xoff."""

    port: int
    cls: int
    xoff: int
    xon: int
    quanta: int = 0xFFFF
    refresh_ms: float = 0.0  # resend Xoff while above Xoff this long after the last one (0: never)

    def check(self) -> None:
        if not 0 <= self.cls < CLASSES:
            raise PfcError(f"class {self.cls} outside 0..7")
        if not 0 <= self.xon < self.xoff < 2**19:
            raise PfcError(f"port {self.port} class {self.cls}: need 0 <= xon < xoff < 2^19, got "
                           f"xon={self.xon} xoff={self.xoff}")
        if not 0 < self.quanta < 2**16:
            raise PfcError(f"port {self.port} class {self.cls}: quanta {self.quanta} outside 1..65535")


@dataclass(frozen=True)
class SwitchPfc:
    """Everything PFC-related one switch needs."""

    switch_id: int
    ports: tuple[PortPfc, ...] = ()
    thresholds: tuple[QueueThresholds, ...] = ()
    probe_priority: int = 0
    port_macs: Mapping[int, int] = field(default_factory=dict)  # source MAC of generated PFC frames per port
    sender_ports: tuple[int, ...] = ()  # further ports PFC frames may leave by (senders of thresholded traffic)


def config_updates(helper: P4InfoHelper, cfg: SwitchPfc) -> list[p4runtime_pb2.Update]:
    """INSERT updates (MODIFY for the switch-wide default entry) that install `cfg` on a switch."""
    if not 0 < cfg.switch_id < 2**16:
        raise PfcError(f"switch id {cfg.switch_id} outside 1..65535 (0 means unconfigured)")
    if not 0 <= cfg.probe_priority < CLASSES:
        raise PfcError(f"probe priority {cfg.probe_priority} outside 0..7")
    out = [_update("MODIFY", helper.table_entry(f"{ING}.pfc_switch", None, f"{ING}.set_switch",
                                                {"switch_id": cfg.switch_id, "probe_prio": cfg.probe_priority},
                                                default=True))]
    for p in cfg.ports:
        p.check()
        out.append(_update("INSERT", helper.table_entry(
            f"{ING}.pfc_port", {"meta.pfc.cfg_port": p.port}, f"{ING}.pfc_port_config",
            {"quantum_x65536": quantum_x65536(p.link_bps), "detect_us": round(p.detect_ms * 1000),
             "restore_us": round(p.restore_ms * 1000), "wd_action": WD_ACTIONS[p.action],
             "deadlock_us": round(p.deadlock_ms * 1000), "probe_interval_us": round(p.probe_interval_ms * 1000),
             "hold_limit": p.hold_limit, "backlog_xoff": p.backlog_xoff, "backlog_quanta": p.backlog_quanta})))
    senders: set[int] = set()
    for t in cfg.thresholds:
        t.check()
        out.append(_update("INSERT", helper.table_entry(
            f"{EGR}.pfc_thresholds", {"standard_metadata.egress_port": t.port, "meta.pfc.cls": t.cls},
            f"{EGR}.set_thresholds", {"xoff": t.xoff, "xon": t.xon, "quanta": t.quanta,
                                      "refresh_us": round(t.refresh_ms * 1000)})))
        senders.add(t.port)
    # A PFC frame goes out of the port its sender is behind: one session for every port the switch uses.
    for port in sorted({p.port for p in cfg.ports} | senders | set(cfg.port_macs) | set(cfg.sender_ports)):
        out.append(_update("INSERT", _entity(clone_session(SESSION_BASE + port, [(port, 1)]))))
    for port, mac in sorted(cfg.port_macs.items()):
        out.append(_update("INSERT", helper.table_entry(f"{EGR}.pfc_src_mac", {"standard_metadata.egress_port": port},
                                                        f"{EGR}.set_src_mac", {"mac": mac})))
    return out


def queue_drop_entry(helper: P4InfoHelper, port: int, cls: int) -> p4runtime_pb2.TableEntry:
    """The deadlock breaker's entry: packets of (port, class) are dropped as they leave the queue."""
    return helper.table_entry(*_drop_args(port, cls))


# ------------------------------------------------------------------------------------------------------ events


@dataclass(frozen=True)
class Hop:
    """One switch of a deadlock cycle and the paused port the probe left it by."""

    switch_id: int
    port: int


@dataclass(frozen=True)
class PfcEvent:
    kind: str  # storm, restore, deadlock
    switch: str
    switch_id: int
    port: int
    classes: tuple[int, ...]
    cycle: tuple[Hop, ...] = ()  # deadlock: in probe order, starting at the reporting switch
    time: float = 0.0


def decode_digest(switch: str, digest: p4runtime_pb2.DigestList, when: float | None = None) -> list[PfcEvent]:
    """`pfc_event_t` digest lists -> events; members in declaration order (kind, switch_id, port, classes, hops,
    path)."""
    events = []
    for data in digest.data:
        values = [decode_int(m.bitstring) for m in data.struct.members]
        if len(values) != 6:
            raise PfcError(f"{switch}: pfc_event_t digest with {len(values)} members, expected 6")
        kind, switch_id, port, classes, hops, path = values
        if kind not in EVENT_KINDS:
            raise PfcError(f"{switch}: unknown PFC event kind {kind}")
        cycle: tuple[Hop, ...] = ()
        if EVENT_KINDS[kind] == "deadlock":
            hops = min(hops, 8)
            words = [(path >> (32 * i)) & 0xFFFFFFFF for i in range(hops)]
            cycle = tuple(Hop(w >> 16, w & 0x1FF) for w in reversed(words))  # oldest hop first
        events.append(PfcEvent(EVENT_KINDS[kind], switch, switch_id, port,
                               tuple(c for c in range(CLASSES) if classes >> c & 1), cycle,
                               when if when is not None else time.time()))
    return events


# ------------------------------------------------------------------------------------------------ the manager


class PfcClient(Protocol):
    """What PfcManager needs of a switch session (controller.client.SwitchClient has it)."""

    @property
    def p4(self) -> P4InfoHelper: ...

    def write(self, updates: list[p4runtime_pb2.Update], *, atomicity: str = ...) -> None: ...

    def enable_digest(self, name: str, **config: int) -> None: ...


@dataclass
class Breaker:
    """A deadlock broken on one queue of the cycle (`hop`'s port on `hop`'s switch); removed at `until`
    (monotonic). `kind` "release": the switch behind that port (`switch`) sends Xon out of `port` so the queue
    drains into it, dropping what it cannot hold; "drop": the queue's own switch drops what leaves it."""

    switch: str
    hop: Hop
    cls: int
    until: float
    kind: str = "drop"
    port: int = 0


class PfcManager:
    """Installs PFC settings on switches, turns their digests into events and breaks detected deadlocks.

    Feed it digests with `on_digest(switch, digest_list)` (e.g. from `SwitchClient(on_event=...)`); call `tick()`
    now and then (or `run_timer()`) so breakers are removed after `break_ms`. `on_event` sees every PfcEvent and
    every action taken ("break", "unbreak")."""

    def __init__(self, clients: Mapping[str, PfcClient], *, break_ms: float = 200.0,
                 on_event: Callable[[str, Any], None] | None = None,
                 links: Mapping[tuple[str, int], tuple[str, int]] | None = None) -> None:
        self.clients = dict(clients)
        self.links = dict(links or {})  # (switch, port) -> (neighbour, its port): enables the "release" breaker
        self.break_ms = break_ms
        self.on_event = on_event
        self.switch_ids: dict[str, int] = {}
        self.events: list[PfcEvent] = []
        self.breakers: dict[tuple[str, int, int], Breaker] = {}
        self.storms: set[tuple[str, int, int]] = set()
        self._lock = threading.Lock()

    def configure(self, switch: str, cfg: SwitchPfc, *, digests: bool = True) -> None:
        client = self._client(switch)
        client.write(config_updates(client.p4, cfg))
        self.switch_ids[switch] = cfg.switch_id
        if digests:
            client.enable_digest(DIGEST, max_list_size=1)

    def on_digest(self, switch: str, digest: p4runtime_pb2.DigestList) -> list[PfcEvent]:
        client = self._client(switch)
        if client.p4.digest_name(digest.digest_id) != DIGEST:
            return []
        events = decode_digest(switch, digest)
        for ev in events:
            self.handle(ev)
        return events

    def handle(self, ev: PfcEvent) -> None:
        with self._lock:
            self.events.append(ev)
            for cls in ev.classes:
                key = (ev.switch, ev.port, cls)
                if ev.kind == "storm":
                    self.storms.add(key)
                elif ev.kind == "restore":
                    self.storms.discard(key)
        self._notify(ev.kind, ev)
        if ev.kind == "deadlock" and ev.cycle:
            self.break_deadlock(ev)

    def break_deadlock(self, ev: PfcEvent) -> Breaker | None:
        """Break the cycle on one queue: the hop of the switch with the lowest id (every switch reporting the same
        cycle picks the same queue), for the cycle's class. With the link behind that hop known (`links`), its
        downstream switch releases it (`pfc_release`: Xon, drops what it cannot take), which works whatever holds
        the pause (a port MAC or the program); otherwise the queue's switch drops what leaves the queue
        (`pfc_queue_drop`), which drains it once the pause lapses."""
        by_id = {sid: name for name, sid in self.switch_ids.items()}
        hops = [h for h in ev.cycle if h.switch_id in by_id]
        if not hops:
            log.warning("deadlock reported by %s through unknown switches %s", ev.switch, ev.cycle)
            return None
        hop = min(hops, key=lambda h: (h.switch_id, h.port))
        switch = by_id[hop.switch_id]
        cls = ev.classes[0]
        key = (switch, hop.port, cls)
        until = time.monotonic() + self.break_ms / 1000
        behind = self.links.get((switch, hop.port))
        with self._lock:
            existing = self.breakers.get(key)
            if existing is not None:
                existing.until = until
                return existing
            if behind is not None:
                breaker = Breaker(behind[0], hop, cls, until, "release", behind[1])
            else:
                breaker = Breaker(switch, hop, cls, until, "drop", hop.port)
            self.breakers[key] = breaker
        client = self._client(breaker.switch)
        client.write([_update("INSERT", _breaker_entry(client.p4, breaker))])
        self._notify("break", breaker)
        return breaker

    def tick(self, now: float | None = None) -> list[Breaker]:
        """Remove the breakers whose time is up (the queue drained; pause works again)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            done = [(k, b) for k, b in self.breakers.items() if b.until <= now]
            for k, _ in done:
                del self.breakers[k]
        for _, b in done:
            client = self._client(b.switch)
            client.write([_update("DELETE", _breaker_entry(client.p4, b))])
            self._notify("unbreak", b)
        return [b for _, b in done]

    def run_timer(self, stop: threading.Event, period_s: float = 0.05) -> threading.Thread:
        """A daemon thread that calls tick() every `period_s` until `stop` is set."""
        def loop() -> None:
            while not stop.wait(period_s):
                try:
                    self.tick()
                except ControllerError as exc:
                    log.warning("pfc: removing a deadlock breaker failed: %s", exc)

        t = threading.Thread(target=loop, name="pfc-timer", daemon=True)
        t.start()
        return t

    def _client(self, switch: str) -> PfcClient:
        try:
            return self.clients[switch]
        except KeyError:
            raise PfcError(f"unknown switch {switch!r}") from None

    def _notify(self, kind: str, what: Any) -> None:
        if self.on_event is not None:
            self.on_event(kind, what)


def release_entry(helper: P4InfoHelper, port: int, cls: int) -> p4runtime_pb2.TableEntry:
    """The release breaker's entry: traffic of `cls` makes the switch send Xon for `cls` out of `port`."""
    return helper.table_entry(f"{ING}.pfc_release", {"meta.pfc.cls": cls}, f"{ING}.release", {"port": port})


def _breaker_entry(helper: P4InfoHelper, b: Breaker) -> p4runtime_pb2.TableEntry:
    if b.kind == "release":
        return release_entry(helper, b.port, b.cls)
    return queue_drop_entry(helper, b.hop.port, b.cls)


def _drop_args(port: int, cls: int) -> tuple[str, dict[str, int], str]:
    return (f"{EGR}.pfc_queue_drop", {"standard_metadata.egress_port": port, "meta.pfc.cls": cls},
            f"{EGR}.queue_drop")


def _update(kind: str, obj: Any) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(kind), entity=_entity(obj))


def _entity(obj: Any) -> p4runtime_pb2.Entity:
    if isinstance(obj, p4runtime_pb2.Entity):
        return obj
    e = p4runtime_pb2.Entity()
    if isinstance(obj, p4runtime_pb2.TableEntry):
        e.table_entry.CopyFrom(obj)
    else:
        e.packet_replication_engine_entry.CopyFrom(obj)
    return e


def hops_text(cycle: Iterable[Hop]) -> str:
    """`s1:p2 -> s2:p3 -> ...` for logs and reports."""
    return " -> ".join(f"s{h.switch_id}:p{h.port}" for h in cycle)
