"""Mastership arbitration by election id, per role, as the P4Runtime spec and PI define it: the stream with the
highest election id is the primary (told OK), the others are backups (told ALREADY_EXISTS with the primary's id);
a duplicate election id ends the new stream with INVALID_ARGUMENT; when the primary leaves or is outbid, the
new primary and the backups are told. A stream without an election id (or 0) can never be primary."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field

from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

from p4switch.server.errors import RpcError

CLOSE = object()  # outbox sentinel: end the stream normally


def election_value(uint128: p4runtime_pb2.Uint128) -> int:
    return (uint128.high << 64) | uint128.low


@dataclass(eq=False)
class Stream:
    """One StreamChannel: messages queued in `outbox` are written by the RPC's response generator."""

    peer: str = ""
    outbox: queue.Queue[object] = field(default_factory=queue.Queue)
    device_id: int | None = None
    role: str = ""
    election_id: int = 0

    def send(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        self.outbox.put(msg)

    def fail(self, error: RpcError) -> None:
        self.outbox.put(error)

    def close(self) -> None:
        self.outbox.put(CLOSE)


class Arbitrator:
    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._lock = threading.Lock()
        self._streams: list[Stream] = []

    def primary(self, role: str = "") -> Stream | None:
        with self._lock:
            return self._primary(role)

    def _primary(self, role: str) -> Stream | None:
        candidates = [s for s in self._streams if s.role == role and s.election_id > 0]
        return max(candidates, key=lambda s: s.election_id, default=None)

    def is_primary(self, role: str, election_id: int) -> bool:
        """Whether a Write/SetForwardingPipelineConfig carrying `election_id` comes from the role's primary."""
        primary = self.primary(role)
        return primary is not None and election_id == primary.election_id

    def arbitrate(self, stream: Stream, update: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        if update.device_id != self.device_id:
            raise RpcError(code_pb2.NOT_FOUND, f"unknown device id {update.device_id} (this is {self.device_id})")
        role = update.role.name if update.HasField("role") else ""
        election_id = election_value(update.election_id) if update.HasField("election_id") else 0
        with self._lock:
            if election_id > 0 and any(
                s is not stream and s.role == role and s.election_id == election_id for s in self._streams
            ):
                raise RpcError(code_pb2.INVALID_ARGUMENT, f"election id {election_id} is already in use")
            old_primary = self._primary(role)
            old_primary_id = old_primary.election_id if old_primary else 0
            if stream.role != role and stream in self._streams:
                self._streams.remove(stream)
            stream.device_id, stream.role, stream.election_id = update.device_id, role, election_id
            if stream not in self._streams:
                self._streams.append(stream)
            new_primary = self._primary(role)
            changed = new_primary is not old_primary or (new_primary and new_primary.election_id != old_primary_id)
            targets = [s for s in self._streams if s.role == role] if changed else [stream]
            for s in targets:
                s.send(self._update_for(s, role, new_primary))

    def remove(self, stream: Stream) -> None:
        with self._lock:
            if stream not in self._streams:
                return
            was_primary = self._primary(stream.role) is stream
            self._streams.remove(stream)
            if was_primary:
                new_primary = self._primary(stream.role)
                for s in self._streams:
                    if s.role == stream.role:
                        s.send(self._update_for(s, stream.role, new_primary))

    def streams(self) -> list[Stream]:
        with self._lock:
            return list(self._streams)

    def _update_for(self, s: Stream, role: str, primary: Stream | None) -> p4runtime_pb2.StreamMessageResponse:
        msg = p4runtime_pb2.StreamMessageResponse()
        arb = msg.arbitration
        arb.device_id = self.device_id
        if role:
            arb.role.name = role
        if primary is not None:
            arb.election_id.high, arb.election_id.low = primary.election_id >> 64, primary.election_id & ((1 << 64) - 1)
        if primary is s:
            arb.status.CopyFrom(status_pb2.Status(code=code_pb2.OK, message="primary"))
        elif primary is not None:
            arb.status.CopyFrom(status_pb2.Status(code=code_pb2.ALREADY_EXISTS, message="backup"))
        else:
            arb.status.CopyFrom(status_pb2.Status(code=code_pb2.NOT_FOUND, message="no primary"))
        return msg
