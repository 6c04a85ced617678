"""Controller events: what switches reported (stream loss, mastership, digests) and what the controller did.

Events are appended as JSON lines to a log next to the state file, so `p4ina ctl events --follow` in one
terminal shows what a `p4ina ctl watch` (or any other command) in another does. Writes are single `write()`
calls of whole lines on a file opened for append, so concurrent writers never interleave inside a line.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from controller.client import StreamEvent
from controller.encoding import decode_int
from controller.p4info import P4InfoHelper


@dataclass
class Event:
    kind: str  # switch_lost, switch_back, mastership_lost, digest, job_created, job_deleted, job_rebuilt, ...
    switch: str = ""
    job: int | None = None
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", None, {})}

    def line(self) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(self.time)) + f".{int(self.time * 1000) % 1000:03d}"
        parts = [stamp, self.kind]
        if self.switch:
            parts.append(f"switch={self.switch}")
        if self.job is not None:
            parts.append(f"job={self.job}")
        if self.detail:
            parts.append(self.detail)
        if self.data:
            parts.append(" ".join(f"{k}={v}" for k, v in self.data.items()))
        return " ".join(parts)


class EventLog:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.listeners: list[Callable[[Event], None]] = []

    def emit(self, event: Event) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = (json.dumps(event.to_dict(), sort_keys=True) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        for listener in list(self.listeners):
            listener(event)

    def read(self) -> list[Event]:
        if not self.path.exists():
            return []
        return [_parse(line) for line in self.path.read_text().splitlines() if line.strip()]

    def follow(self, stop: threading.Event | None = None, poll: float = 0.2,
               from_start: bool = False) -> Iterator[Event]:
        """Yield events as they are appended (like `tail -f`); ends when `stop` is set."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch(exist_ok=True)
        with open(self.path) as f:
            if not from_start:
                f.seek(0, os.SEEK_END)
            buf = ""
            while stop is None or not stop.is_set():
                chunk = f.readline()
                if not chunk:
                    time.sleep(poll)
                    continue
                buf += chunk
                if buf.endswith("\n"):
                    if buf.strip():
                        yield _parse(buf)
                    buf = ""


def _parse(line: str) -> Event:
    d = json.loads(line)
    return Event(**{k: d[k] for k in ("kind", "switch", "job", "detail", "data", "time") if k in d})


def from_stream(ev: StreamEvent, helper: P4InfoHelper | None) -> Event | None:
    """A controller event for a stream event (None for noise such as packet-ins)."""
    if ev.kind == "stream_closed":
        return Event("switch_lost", ev.switch, detail=ev.detail, time=ev.time)
    if ev.kind == "mastership_lost":
        return Event("mastership_lost", ev.switch, detail=ev.detail, time=ev.time)
    if ev.kind == "digest" and ev.message is not None:
        return digest_event(ev.switch, ev.message, helper, ev.time)
    if ev.kind == "error":
        return Event("switch_error", ev.switch, detail=ev.detail, time=ev.time)
    return None


def digest_event(switch: str, digest: Any, helper: P4InfoHelper | None, when: float | None = None) -> Event:
    """Decode a DigestList into named fields (struct members from P4Info), one event per list."""
    name, fields = str(digest.digest_id), []
    if helper is not None:
        try:
            name = helper.digest_name(digest.digest_id)
            fields = helper.digest_field_names(digest.digest_id)
        except Exception:  # unknown digest id: keep the raw id
            pass
    items = []
    for data in digest.data:
        if data.HasField("struct"):
            values = [decode_int(m.bitstring) for m in data.struct.members]
        else:
            values = [decode_int(data.bitstring)]
        names = fields if len(fields) == len(values) else [f"f{i}" for i in range(len(values))]
        items.append(dict(zip(names, values, strict=True)))
    return Event("digest", switch, detail=name, data={"list_id": digest.list_id, "items": items},
                 time=when or time.time())
