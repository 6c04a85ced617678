"""One P4Runtime client per switch: stream channel, mastership, reads, writes, pipeline, packet I/O, digests.

No module-level state: a controller holds one `SwitchClient` per switch and may drive many at once from threads.
Every RPC has a deadline, so a hung switch surfaces as `SwitchUnavailableError` instead of blocking. Mastership
follows the P4Runtime spec (section 5): the client arbitrates with its election id; when another controller with a
higher id takes over, the switch sends an arbitration update whose status is not OK, the client marks itself backup
and refuses further writes with `MastershipError` until it re-arbitrates.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller import rpc_errors
from controller.exceptions import ControllerError, MastershipError, SwitchUnavailableError
from controller.p4info import P4InfoHelper

log = logging.getLogger(__name__)

QUEUE_LIMIT = 10_000

# gRPC's default 16 KB limit on received metadata is too small for P4Runtime: a batch Write whose updates are
# rejected carries one p4.v1.Error per update in `grpc-status-details-bin`, and simple_switch_grpc's answer to a
# few hundred rejected register writes is ~25 KB, which the client would turn into RESOURCE_EXHAUSTED ("received
# metadata size exceeds hard limit") and lose every per-update code. Reads of large tables need big messages too.
MAX_METADATA_BYTES = 4 << 20
MAX_MESSAGE_BYTES = 256 << 20
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_metadata_size", MAX_METADATA_BYTES),            # the soft limit
    ("grpc.absolute_max_metadata_size", MAX_METADATA_BYTES),   # the hard limit (gRPC >= 1.54)
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
)
Update = p4runtime_pb2.Update
Entity = p4runtime_pb2.Entity


def fresh_election_id() -> tuple[int, int]:
    """A new (high, low) election id that beats any older controller's: microseconds since the epoch."""
    return 0, time.time_ns() // 1000


@dataclass
class StreamEvent:
    """Something the switch told us on the stream (or the stream's end)."""

    switch: str
    kind: str  # "primary", "backup", "mastership_lost", "stream_closed", "digest", "packet_in", "error"
    detail: str = ""
    message: Any = None
    time: float = field(default_factory=time.time)


@dataclass(frozen=True)
class _StreamEnded:
    """Put on the arbitration queue when the switch ends the stream, so a pending arbitration fails at once."""

    reason: str


class SwitchClient:
    """P4Runtime session with one switch.

    Use as a context manager or call `connect()` / `close()`. `on_event` is called from the stream thread for
    arbitration changes, stream loss, digests and packet-ins (digests are acked automatically).
    """

    def __init__(self, name: str, address: str, device_id: int = 0, *, election_id: tuple[int, int] | None = None,
                 timeout: float = 5.0, on_event: Callable[[StreamEvent], None] | None = None,
                 credentials: grpc.ChannelCredentials | None = None, server_name: str = "") -> None:
        self.name = name
        self.address = address
        self.device_id = device_id
        self.election_id = election_id or fresh_election_id()
        self.timeout = timeout
        self.on_event = on_event
        self.credentials = credentials  # None: plain text; else TLS (see `tls_credentials`)
        self.server_name = server_name
        self.helper: P4InfoHelper | None = None
        self.is_primary = False
        # bounded: a listener that never drains them must not grow memory without limit (the newest are dropped)
        self.packet_ins: queue.Queue[p4runtime_pb2.PacketIn] = queue.Queue(maxsize=QUEUE_LIMIT)
        self.digests: queue.Queue[p4runtime_pb2.DigestList] = queue.Queue(maxsize=QUEUE_LIMIT)
        self.dropped_messages = 0
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        self._requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] | None = None
        self._reader: threading.Thread | None = None
        self._arbitration: queue.Queue[p4runtime_pb2.MasterArbitrationUpdate | _StreamEnded] = queue.Queue()
        self._stream: Any = None
        self._lock = threading.Lock()
        self._closing = False

    # -- connection ---------------------------------------------------------------------------------------------
    def connect(self, *, require_primary: bool = True) -> SwitchClient:
        """Open the channel and the stream, arbitrate; raise unless primary when `require_primary`."""
        with self._lock:
            self._close_locked()
            self._closing = False
            options: list[tuple[str, Any]] = list(CHANNEL_OPTIONS)
            if self.credentials is None:
                self._channel = grpc.insecure_channel(self.address, options=options)
            else:
                if self.server_name:
                    options.append(("grpc.ssl_target_name_override", self.server_name))
                self._channel = grpc.secure_channel(self.address, self.credentials, options=options)
            self._stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
            try:  # fails at once on a refused connection, at the deadline on a hung server
                self._stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=self.timeout)
            except grpc.RpcError as exc:
                self._close_locked()
                raise SwitchUnavailableError(self.name, f"no P4Runtime server at {self.address} "
                                                        f"({exc.code().name})") from None
            self._requests = queue.Queue()
            self._arbitration = queue.Queue()
            self._stream = self._stub.StreamChannel(_drain(self._requests))
            self._reader = threading.Thread(target=self._read_stream, args=(self._stream,),
                                            name=f"p4rt-stream-{self.name}", daemon=True)
            self._reader.start()
        try:
            self.arbitrate(require_primary=require_primary)
        except Exception:  # refused or unanswered: leave no stream (and no election id) behind at the switch
            self.close()
            raise
        return self

    def arbitrate(self, *, require_primary: bool = True) -> bool:
        """Send our election id on the stream; return True when the switch made us primary."""
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.high, req.arbitration.election_id.low = self.election_id
        while not self._arbitration.empty():  # answers to earlier requests or older announcements
            self._arbitration.get_nowait()
        self._send(req)
        try:
            update = self._arbitration.get(timeout=self.timeout)
        except queue.Empty:
            raise SwitchUnavailableError(self.name, f"no arbitration answer within {self.timeout:g} s") from None
        while not self._arbitration.empty():  # keep the newest word on mastership
            update = self._arbitration.get_nowait()
        if isinstance(update, _StreamEnded):
            raise SwitchUnavailableError(self.name, f"the switch ended the stream: {update.reason}")
        self.is_primary = update.status.code == code_pb2.OK
        if not self.is_primary and require_primary:
            raise MastershipError(self.name, "another controller is primary "
                                             f"(status {rpc_errors.code_name(update.status.code)}); not writing")
        return self.is_primary

    def reconnect(self, attempts: int = 3, delay: float = 0.5) -> None:
        """Re-open the session (same election id, so we become primary again unless someone newer took over)."""
        last: Exception | None = None
        for _ in range(max(1, attempts)):
            try:
                self.connect()
                return
            except SwitchUnavailableError as exc:
                last = exc
                time.sleep(delay)
        assert last is not None
        raise last

    @property
    def connected(self) -> bool:
        return self._reader is not None and self._reader.is_alive()

    def close(self) -> None:
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        self._closing = True
        if self._requests is not None:
            self._requests.put(None)
        if self._stream is not None:
            self._stream.cancel()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=self.timeout)
        if self._channel is not None:
            self._channel.close()
        self._channel = self._stub = self._requests = self._reader = self._stream = None
        self.is_primary = False

    def __enter__(self) -> SwitchClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- stream ---------------------------------------------------------------------------------------------------
    def _send(self, req: p4runtime_pb2.StreamMessageRequest) -> None:
        if self._requests is None:
            raise SwitchUnavailableError(self.name, "not connected")
        self._requests.put(req)

    def _emit(self, kind: str, detail: str = "", message: Any = None) -> None:
        if self.on_event is not None:
            try:
                self.on_event(StreamEvent(self.name, kind, detail, message))
            except Exception:  # a faulty listener must not kill the stream thread
                log.exception("event listener failed for %s", self.name)

    def _read_stream(self, stream: Any) -> None:
        try:
            for msg in stream:
                which = msg.WhichOneof("update")
                if which == "arbitration":
                    self._on_arbitration(msg.arbitration)
                elif which == "packet":
                    self._keep(self.packet_ins, msg.packet)
                    self._emit("packet_in", message=msg.packet)
                elif which == "digest":
                    self._keep(self.digests, msg.digest)
                    ack = p4runtime_pb2.StreamMessageRequest()
                    ack.digest_ack.digest_id = msg.digest.digest_id
                    ack.digest_ack.list_id = msg.digest.list_id
                    if self._requests is not None:
                        self._requests.put(ack)
                    self._emit("digest", message=msg.digest)
                elif which == "error":
                    self._emit("error", msg.error.message, msg.error)
        except grpc.RpcError as exc:
            if not self._closing:
                self.is_primary = False
                reason = f"{exc.code().name}: {exc.details()}"
                self._arbitration.put(_StreamEnded(reason))
                self._emit("stream_closed", reason)
            return
        if not self._closing:
            self.is_primary = False
            self._arbitration.put(_StreamEnded("server ended the stream"))
            self._emit("stream_closed", "server ended the stream")

    def _keep(self, q: queue.Queue[Any], item: Any) -> None:
        try:
            q.put_nowait(item)
        except queue.Full:
            self.dropped_messages += 1

    def _on_arbitration(self, update: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        was_primary = self.is_primary
        now_primary = update.status.code == code_pb2.OK
        self._arbitration.put(update)
        self.is_primary = now_primary
        if was_primary and not now_primary:
            self._emit("mastership_lost", "a controller with a higher election id took over")
        elif now_primary != was_primary:
            self._emit("primary" if now_primary else "backup")

    # -- unary RPCs -------------------------------------------------------------------------------------------
    def _call(self, rpc: str, request: Any, timeout: float | None = None) -> Any:
        if self._stub is None:
            raise SwitchUnavailableError(self.name, "not connected")
        try:
            return getattr(self._stub, rpc)(request, timeout=timeout or self.timeout)
        except grpc.RpcError as exc:
            err = rpc_errors.decode(self.name, rpc, exc)
            if getattr(err, "code_name", "") == "PERMISSION_DENIED":
                self.is_primary = False
                raise MastershipError(self.name, f"{rpc} refused: not primary ({err})") from None
            raise err from None

    def _election(self, msg: Any) -> None:
        msg.election_id.high, msg.election_id.low = self.election_id

    def _require_primary(self, what: str) -> None:
        if not self.is_primary:
            raise MastershipError(self.name, f"not primary; refusing to {what}")

    def capabilities(self) -> str:
        return str(self._call("Capabilities", p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version)

    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes, *,
                     action: str = "VERIFY_AND_COMMIT", cookie: int | None = None) -> None:
        self._require_primary("push a pipeline")
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        self._election(req)
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.Action.Value(action)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        if cookie is not None:
            req.config.cookie.cookie = cookie
        self._call("SetForwardingPipelineConfig", req, timeout=max(self.timeout, 30.0))
        self.helper = P4InfoHelper(p4info)

    def get_pipeline(self, response_type: str = "ALL") -> p4runtime_pb2.ForwardingPipelineConfig:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=self.device_id)
        req.response_type = p4runtime_pb2.GetForwardingPipelineConfigRequest.ResponseType.Value(response_type)
        return self._call("GetForwardingPipelineConfig", req).config

    def load_pipeline_helper(self) -> P4InfoHelper:
        """Fetch the switch's current P4Info (for a controller attaching to a running fabric)."""
        config = self.get_pipeline("P4INFO_AND_COOKIE")
        self.helper = P4InfoHelper(config.p4info)
        return self.helper

    @property
    def p4(self) -> P4InfoHelper:
        if self.helper is None:
            self.load_pipeline_helper()
        assert self.helper is not None
        return self.helper

    def write(self, updates: Sequence[p4runtime_pb2.Update], *, atomicity: str = "CONTINUE_ON_ERROR") -> None:
        """Send one batch; a failure raises `RpcError` whose `updates` name each failed update."""
        if not updates:
            return
        self._require_primary("write")
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        self._election(req)
        req.atomicity = p4runtime_pb2.WriteRequest.Atomicity.Value(atomicity)
        req.updates.extend(updates)
        self._call("Write", req)

    def read(self, entities: Sequence[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        if self._stub is None:
            raise SwitchUnavailableError(self.name, "not connected")
        out: list[p4runtime_pb2.Entity] = []
        try:
            for resp in self._stub.Read(req, timeout=self.timeout):
                out.extend(resp.entities)
        except grpc.RpcError as exc:
            raise rpc_errors.decode(self.name, "Read", exc) from None
        return out

    # -- convenience ------------------------------------------------------------------------------------------
    def read_table(self, table: str) -> list[p4runtime_pb2.TableEntry]:
        e = p4runtime_pb2.Entity()
        e.table_entry.table_id = self.p4.table_id(table)
        return [x.table_entry for x in self.read([e])]

    def read_all_tables(self) -> list[p4runtime_pb2.TableEntry]:
        e = p4runtime_pb2.Entity()
        e.table_entry.table_id = 0
        return [x.table_entry for x in self.read([e])]

    def read_multicast_groups(self) -> list[p4runtime_pb2.MulticastGroupEntry]:
        e = p4runtime_pb2.Entity()
        e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 0
        return [x.packet_replication_engine_entry.multicast_group_entry for x in self.read([e])]

    def read_counter(self, name: str, index: int | None = None) -> list[p4runtime_pb2.CounterEntry]:
        e = p4runtime_pb2.Entity()
        e.counter_entry.CopyFrom(self.p4.counter_entry(name, index))
        return [x.counter_entry for x in self.read([e])]

    def enable_digest(self, name: str, **config: int) -> None:
        e = p4runtime_pb2.Entity()
        e.digest_entry.CopyFrom(self.p4.digest_entry(name, **config))
        self.write([p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=e)])

    def send_packet_out(self, payload: bytes, **metadata: Any) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.CopyFrom(self.p4.packet_out(payload, metadata))
        self._send(req)


def tls_credentials(ca: str, cert: str = "", key: str = "") -> grpc.ChannelCredentials:
    """Channel credentials from PEM files: the CA that signed the switches' certificates, and for mutual TLS the
    controller's certificate and key."""
    try:
        root = Path(ca).read_bytes()
        chain = Path(cert).read_bytes() if cert else None
        private = Path(key).read_bytes() if key else None
    except OSError as exc:
        raise ControllerError(f"cannot read TLS file {exc.filename}: {exc.strerror}") from None
    if (chain is None) != (private is None):
        raise ControllerError("TLS: give both the client certificate and its key, or neither")
    return grpc.ssl_channel_credentials(root_certificates=root, private_key=private, certificate_chain=chain)


def update(kind: str, entity: p4runtime_pb2.Entity) -> p4runtime_pb2.Update:
    """An Update of type INSERT, MODIFY or DELETE."""
    return p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(kind), entity=entity)


def entity(obj: Any) -> p4runtime_pb2.Entity:
    """Wrap a TableEntry, PacketReplicationEngineEntry, CounterEntry, RegisterEntry or DigestEntry."""
    e = p4runtime_pb2.Entity()
    if isinstance(obj, p4runtime_pb2.TableEntry):
        e.table_entry.CopyFrom(obj)
    elif isinstance(obj, p4runtime_pb2.PacketReplicationEngineEntry):
        e.packet_replication_engine_entry.CopyFrom(obj)
    elif isinstance(obj, p4runtime_pb2.CounterEntry):
        e.counter_entry.CopyFrom(obj)
    elif isinstance(obj, p4runtime_pb2.RegisterEntry):
        e.register_entry.CopyFrom(obj)
    elif isinstance(obj, p4runtime_pb2.DigestEntry):
        e.digest_entry.CopyFrom(obj)
    else:
        raise TypeError(f"cannot wrap {type(obj).__name__} in an Entity")
    return e


def _drain(requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None]
           ) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
    while True:
        item = requests.get()
        if item is None:
            return
        yield item
