"""Mastership arbitration by election id, per role, as PI's server (`proto/server/pi_server.cpp`) does it: the
stream with the highest election id is the primary (told OK), the others are backups (told ALREADY_EXISTS); every
answer carries the primary's election id. A second stream with an election id already in use is ended with
INVALID_ARGUMENT, a 17th stream with RESOURCE_EXHAUSTED, a device id change on a stream with FAILED_PRECONDITION.
When the primary changes (outbid, or gone), every stream of the role is told. As in PI, 0 (or no election id) is
an election id like any other, and while no stream exists a request without an election id may write.

A stream ends when its client half-closes or goes away, and its election id is free again at once. Clients such as
p4lang/tutorials' p4runtime_lib half-close the old stream and open a new one with the same election id right away;
PI reads the half-close first in practice, while this server's threads may see the new arbitration first. So a
duplicate election id waits up to `DUPLICATE_GRACE_S` for the holder to go before it is refused."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field

from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

from p4switch.server.errors import RpcError

CLOSE = object()  # outbox sentinel: end the stream normally
MAX_STREAMS = 16  # PI's DeviceState::max_connections
DUPLICATE_GRACE_S = 1.0  # how long a duplicate election id waits for a closing holder (see the module docstring)


def election_value(uint128: p4runtime_pb2.Uint128) -> int:
    return (uint128.high << 64) | uint128.low


@dataclass(eq=False)
class Stream:
    """One StreamChannel: messages queued in `outbox` are written by the RPC's response generator."""

    peer: str = ""
    outbox: queue.Queue[object] = field(default_factory=queue.Queue)
    device_id: int | None = None  # None until the first arbitration update
    role: str = ""
    election_id: int = 0

    def send(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        self.outbox.put(msg)

    def fail(self, error: RpcError) -> None:
        self.outbox.put(error)

    def close(self) -> None:
        self.outbox.put(CLOSE)


class Arbitrator:
    def __init__(self, device_id: int, duplicate_grace_s: float = DUPLICATE_GRACE_S) -> None:
        self.device_id = device_id
        self.duplicate_grace_s = duplicate_grace_s
        self._lock = threading.Lock()
        self._removed = threading.Condition(self._lock)  # notified whenever a stream leaves
        self._streams: list[Stream] = []

    def primary(self, role: str = "") -> Stream | None:
        with self._lock:
            return self._primary(role)

    def _primary(self, role: str) -> Stream | None:
        return max((s for s in self._streams if s.role == role), key=lambda s: s.election_id, default=None)

    def may_write(self, role: str, election_id: p4runtime_pb2.Uint128, has_election_id: bool) -> bool:
        """Whether a Write/SetForwardingPipelineConfig comes from the role's primary (or, with no stream at all,
        carries no election id: PI's allowance for debugging tools)."""
        with self._lock:
            primary = self._primary(role)
            if primary is None:
                return not has_election_id and not self._streams
            return election_value(election_id) == primary.election_id

    def arbitrate(self, stream: Stream, update: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        if update.device_id != self.device_id:
            raise RpcError(code_pb2.NOT_FOUND, f"unknown device id {update.device_id} (this is {self.device_id})")
        if stream.device_id is not None and stream.device_id != update.device_id:
            raise RpcError(code_pb2.FAILED_PRECONDITION, "Invalid device id")
        role = update.role.name if update.HasField("role") else ""
        election_id = election_value(update.election_id)
        with self._lock:
            known = stream in self._streams
            if known and (stream.role, stream.election_id) == (role, election_id):
                return
            if not known and len(self._streams) >= MAX_STREAMS:
                raise RpcError(code_pb2.RESOURCE_EXHAUSTED, "Too many connections")
            deadline = time.monotonic() + self.duplicate_grace_s
            while any(s is not stream and s.role == role and s.election_id == election_id for s in self._streams):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RpcError(code_pb2.INVALID_ARGUMENT, f"election id {election_id} already exists")
                self._removed.wait(remaining)
            known = stream in self._streams  # the wait released the lock
            if not known and len(self._streams) >= MAX_STREAMS:
                raise RpcError(code_pb2.RESOURCE_EXHAUSTED, "Too many connections")
            old_primaries = {r: self._primary(r) for r in {role, stream.role}}
            stream.device_id, stream.role, stream.election_id = update.device_id, role, election_id
            if not known:
                self._streams.append(stream)
            for r, old in old_primaries.items():
                new = self._primary(r)
                if new is not old:
                    self._notify_role(r, new)
                elif stream.role == r:
                    stream.send(self._update_for(stream, r, new))

    def remove(self, stream: Stream) -> None:
        with self._lock:
            if stream not in self._streams:
                return
            was_primary = self._primary(stream.role) is stream
            self._streams.remove(stream)
            self._removed.notify_all()
            if was_primary:
                self._notify_role(stream.role, self._primary(stream.role))

    def streams(self) -> list[Stream]:
        with self._lock:
            return list(self._streams)

    def _notify_role(self, role: str, primary: Stream | None) -> None:
        for s in self._streams:
            if s.role == role:
                s.send(self._update_for(s, role, primary))

    def _update_for(self, s: Stream, role: str, primary: Stream | None) -> p4runtime_pb2.StreamMessageResponse:
        msg = p4runtime_pb2.StreamMessageResponse()
        arb = msg.arbitration
        arb.device_id = self.device_id
        if role:
            arb.role.name = role
        if primary is not None:
            arb.election_id.high, arb.election_id.low = primary.election_id >> 64, primary.election_id & ((1 << 64) - 1)
        if primary is s:
            arb.status.CopyFrom(status_pb2.Status(code=code_pb2.OK, message="Is primary"))
        else:
            arb.status.CopyFrom(status_pb2.Status(code=code_pb2.ALREADY_EXISTS, message="Is backup"))
        return msg
