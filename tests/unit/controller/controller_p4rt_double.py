"""A small in-process P4Runtime server for the controller's client tests.

It implements only the protocol behaviour the client depends on, following the P4Runtime spec and
simple_switch_grpc: arbitration by highest election id (OK for the primary, ALREADY_EXISTS for a backup,
INVALID_ARGUMENT for a duplicate id), PERMISSION_DENIED for writes from a non-primary, per-update errors in
`grpc-status-details-bin` with UNKNOWN at the top, table entries and multicast groups keyed by their identity,
register cells (MODIFY only, one index at a time; cells never written read as absent), pipeline set/get. It never evaluates packets: data-plane behaviour is tested against the real embedded switch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc


class _Stream:
    def __init__(self, election: tuple[int, int]) -> None:
        self.election = election
        self.out: list[p4runtime_pb2.StreamMessageResponse | None] = []
        self.cv = threading.Condition()

    def send(self, msg: p4runtime_pb2.StreamMessageResponse | None) -> None:
        with self.cv:
            self.out.append(msg)
            self.cv.notify()


class P4RuntimeDouble(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, device_id: int = 0) -> None:
        self.device_id = device_id
        self.lock = threading.Lock()
        self.streams: list[_Stream] = []
        self.config: p4runtime_pb2.ForwardingPipelineConfig | None = None
        self.tables: dict[bytes, p4runtime_pb2.TableEntry] = {}
        self.groups: dict[int, p4runtime_pb2.MulticastGroupEntry] = {}
        self.clones: dict[int, p4runtime_pb2.CloneSessionEntry] = {}
        self.digests: dict[int, p4runtime_pb2.DigestEntry] = {}
        self.registers: dict[tuple[int, int], bytes] = {}  # (register id, index) -> bitstring, as written
        self.refuse_registers: int | None = None  # a google.rpc code: register writes fail with it
        self.hang = threading.Event()  # set: unary RPCs block (a hung switch)
        self.writes = 0

    # -- mastership -------------------------------------------------------------------------------------------
    def _primary(self) -> _Stream | None:
        return max(self.streams, key=lambda s: s.election, default=None)

    def _announce(self) -> None:
        primary = self._primary()
        for s in self.streams:
            msg = p4runtime_pb2.StreamMessageResponse()
            msg.arbitration.device_id = self.device_id
            if primary is not None:
                msg.arbitration.election_id.high, msg.arbitration.election_id.low = primary.election
            msg.arbitration.status.code = code_pb2.OK if s is primary else code_pb2.ALREADY_EXISTS
            s.send(msg)

    def StreamChannel(self, request_iterator: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        stream: _Stream | None = None
        holder: dict[str, Any] = {}

        def reader() -> None:
            nonlocal stream
            try:
                for req in request_iterator:
                    if req.WhichOneof("update") != "arbitration":
                        continue
                    eid = (req.arbitration.election_id.high, req.arbitration.election_id.low)
                    with self.lock:
                        if any(s.election == eid for s in self.streams if s is not stream):
                            holder["error"] = (grpc.StatusCode.INVALID_ARGUMENT, "election id already in use")
                            if stream is None:
                                stream = _Stream(eid)
                            stream.send(None)
                            return
                        if stream is None:
                            stream = _Stream(eid)
                            holder["stream"] = stream
                            self.streams.append(stream)
                        stream.election = eid
                        self._announce()
            except grpc.RpcError:
                pass
            finally:
                with self.lock:
                    if stream is not None and stream in self.streams:
                        self.streams.remove(stream)
                        self._announce()
                    if stream is not None:
                        stream.send(None)

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        while "stream" not in holder and "error" not in holder and t.is_alive():
            t.join(0.01)
        if "error" in holder:
            context.abort(*holder["error"])
        s: _Stream | None = holder.get("stream")
        if s is None:
            return
        while True:
            with s.cv:
                while not s.out:
                    s.cv.wait()
                msg = s.out.pop(0)
            if msg is None:
                return
            yield msg

    def _check_primary(self, election: p4runtime_pb2.Uint128, context: grpc.ServicerContext) -> None:
        primary = self._primary()
        if primary is None or primary.election != (election.high, election.low):
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "not the primary controller")

    def _maybe_hang(self) -> None:
        while self.hang.is_set():
            time.sleep(0.02)

    # -- pipeline ---------------------------------------------------------------------------------------------
    def SetForwardingPipelineConfig(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._maybe_hang()
        with self.lock:
            self._check_primary(request.election_id, context)
            self.config = p4runtime_pb2.ForwardingPipelineConfig()
            self.config.CopyFrom(request.config)
            self.tables.clear()
            self.groups.clear()
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request: Any, context: grpc.ServicerContext) -> Any:
        if self.config is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no forwarding pipeline config set")
        resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        assert self.config is not None
        resp.config.CopyFrom(self.config)
        return resp

    def Capabilities(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._maybe_hang()
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version="1.4.1")

    # -- write / read -----------------------------------------------------------------------------------------
    @staticmethod
    def _table_key(e: p4runtime_pb2.TableEntry) -> bytes:
        k = p4runtime_pb2.TableEntry(table_id=e.table_id, priority=e.priority, is_default_action=e.is_default_action)
        k.match.extend(sorted(e.match, key=lambda m: m.field_id))
        return k.SerializeToString(deterministic=True)

    def _apply(self, u: p4runtime_pb2.Update) -> tuple[int, str]:
        which = u.entity.WhichOneof("entity")
        ins, dele = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.DELETE
        if which == "table_entry":
            e = u.entity.table_entry
            key = self._table_key(e)
            store: dict[Any, Any] = self.tables
            value: Any = e
        elif which == "packet_replication_engine_entry":
            pre = u.entity.packet_replication_engine_entry
            if pre.WhichOneof("type") == "multicast_group_entry":
                key, store, value = pre.multicast_group_entry.multicast_group_id, self.groups, pre.multicast_group_entry
            else:
                key, store, value = pre.clone_session_entry.session_id, self.clones, pre.clone_session_entry
            if key == 0:
                return code_pb2.INVALID_ARGUMENT, "id 0 is invalid"
        elif which == "register_entry":
            r = u.entity.register_entry
            if self.refuse_registers is not None:
                return self.refuse_registers, "register write refused"
            if u.type != p4runtime_pb2.Update.MODIFY or not r.HasField("index"):
                return code_pb2.INVALID_ARGUMENT, "registers can only be modified, one index at a time"
            self.registers[r.register_id, r.index.index] = r.data.bitstring
            return code_pb2.OK, ""
        elif which == "digest_entry":
            key, store, value = u.entity.digest_entry.digest_id, self.digests, u.entity.digest_entry
        else:
            return code_pb2.UNIMPLEMENTED, f"{which} not supported by the test double"
        if u.type == ins:
            if key in store:
                return code_pb2.ALREADY_EXISTS, "entry already exists"
            store[key] = type(value)()
            store[key].CopyFrom(value)
        elif u.type == dele:
            if key not in store:
                return code_pb2.NOT_FOUND, "entry not found"
            del store[key]
        else:
            if key not in store:
                return code_pb2.NOT_FOUND, "entry not found"
            store[key].CopyFrom(value)
        return code_pb2.OK, ""

    def Write(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._maybe_hang()
        with self.lock:
            self._check_primary(request.election_id, context)
            self.writes += 1
            results = [self._apply(u) for u in request.updates]
        if any(code != code_pb2.OK for code, _ in results):
            status = status_pb2.Status(code=code_pb2.UNKNOWN, message="write failed")
            for code, msg in results:
                detail = any_pb2.Any()
                detail.Pack(p4runtime_pb2.Error(canonical_code=code, message=msg, space="ALL-sswitch-p4org"))
                status.details.append(detail)
            context.abort_with_status(_RichStatus(status))
        return p4runtime_pb2.WriteResponse()

    def Read(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        self._maybe_hang()
        resp = p4runtime_pb2.ReadResponse()
        with self.lock:
            for ent in request.entities:
                which = ent.WhichOneof("entity")
                if which == "table_entry":
                    tid = ent.table_entry.table_id
                    for e in self.tables.values():
                        if tid in (0, e.table_id):
                            resp.entities.add().table_entry.CopyFrom(e)
                elif which == "packet_replication_engine_entry":
                    gid = ent.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
                    for g_id, g in sorted(self.groups.items()):
                        if gid in (0, g_id):
                            resp.entities.add().packet_replication_engine_entry.multicast_group_entry.CopyFrom(g)
        yield resp


class _RichStatus(grpc.Status):
    def __init__(self, status: status_pb2.Status) -> None:
        self.code = grpc.StatusCode.UNKNOWN
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)


class DoubleServer:
    """Run a `P4RuntimeDouble` on a free loopback port; `stop()` ends it (a switch going away)."""

    def __init__(self, device_id: int = 0) -> None:
        self.servicer = P4RuntimeDouble(device_id)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(self.servicer, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{self.port}"
        self.server.start()

    def stop(self) -> None:
        with self.servicer.lock:
            for s in self.servicer.streams:
                s.send(None)
        self.server.stop(grace=0).wait(2)
