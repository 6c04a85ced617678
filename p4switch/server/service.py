"""The P4Runtime service (p4.v1.P4Runtime) over one `Device`, answering as simple_switch_grpc does.

Status codes: a non-primary Write/SetForwardingPipelineConfig is PERMISSION_DENIED; Write/Read before a pipeline is
FAILED_PRECONDITION; a batch with failed updates is UNKNOWN at the top with one `p4.v1.Error` per update in
`grpc-status-details-bin`; ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC are UNIMPLEMENTED (as in PI).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc

from p4switch.runtime.entries import EntityCodec, apply_updates, encode_bytes
from p4switch.runtime.state import DigestList, RuntimeState, RuntimeStateError
from p4switch.server import pipeline
from p4switch.server.arbitration import CLOSE, Arbitrator, Stream
from p4switch.server.device import Device
from p4switch.server.errors import RpcError
from p4switch.server.packetio import ControllerHeader
from p4switch.server.policer import PolicerConfig, TokenBucket

_log = logging.getLogger("p4switch.server")

_GRPC_CODES = {c.value[0]: c for c in grpc.StatusCode}
_READ_CHUNK = 1000
_DIGEST_POLL_S = 0.002  # while a digest holds a sample or awaits an ack
_IDLE_SWEEP_S = 0.1  # between idle timeout sweeps
MAX_BACKLOG = 4096  # stream messages queued for a client that reads too slowly; more packet-ins/digests are dropped

SetAction = p4runtime_pb2.SetForwardingPipelineConfigRequest
GetType = p4runtime_pb2.GetForwardingPipelineConfigRequest


def api_version() -> str:
    try:
        return metadata.version("p4runtime")
    except metadata.PackageNotFoundError:  # pragma: no cover - the dependency is pinned
        return "1.4.1"


def _fail(context: grpc.ServicerContext, code: int, message: str, details: list[p4runtime_pb2.Error] | None = None) -> None:
    """Set the RPC's status; per-update errors go into `grpc-status-details-bin` as a google.rpc.Status."""
    if details is not None:
        status = status_pb2.Status(code=code, message=message)
        for error in details:
            packed = any_pb2.Any()
            packed.Pack(error)
            status.details.append(packed)
        context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
    context.set_code(_GRPC_CODES.get(code, grpc.StatusCode.UNKNOWN))
    context.set_details(message)


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, device: Device, device_id: int = 0, *, packet_in_policer: PolicerConfig | None = None,
                 digest_policer: PolicerConfig | None = None) -> None:
        self.device = device
        self.device_id = device_id
        self.arbitrator = Arbitrator(device_id)
        self.config: pipeline.PipelineConfig | None = None
        self.saved: pipeline.PipelineConfig | None = None
        self._pipeline_lock = threading.RLock()
        self._codec: EntityCodec | None = None
        self._packet_in: ControllerHeader | None = None
        self._packet_out: ControllerHeader | None = None
        self._digest_struct: dict[int, bool] = {}
        self._stop = threading.Event()
        self._timer_kick = threading.Event()  # wakes the housekeeping thread (a digest sample, close)
        self._poller: threading.Thread | None = None
        self.counters = {"packet_in": 0, "packet_in_dropped": 0, "packet_out": 0, "digest_lists": 0,
                         "idle_notifications": 0, "packet_in_policed": 0, "digest_lists_policed": 0,
                         "digest_lists_dropped": 0, "stream_backlog_dropped": 0}
        self.policers = {"packet_in": TokenBucket(packet_in_policer), "digest": TokenBucket(digest_policer)}
        device.packet_in_sink = self._on_packet_in
        if device.state is not None:  # a switch started with a pipeline (`p4ina switch prog.json`)
            self.config = pipeline.from_state(device.state)
            self._bind(device.state)

    # -- helpers ------------------------------------------------------------------------------------------------
    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise RpcError(code_pb2.NOT_FOUND, f"unknown device id {device_id} (this is {self.device_id})")

    def _codec_or_fail(self) -> EntityCodec:
        codec = self._codec
        if codec is None or self.device.state is None:
            raise RpcError(code_pb2.FAILED_PRECONDITION, "no forwarding pipeline config set for this device")
        if codec.state is not self.device.state:  # the engine replaced its state (file reload)
            self._bind(self.device.state)
            codec = self._codec
            assert codec is not None
        return codec

    def _require_primary(self, request: p4runtime_pb2.WriteRequest | p4runtime_pb2.SetForwardingPipelineConfigRequest
                         ) -> None:
        if not self.arbitrator.may_write(request.role, request.election_id, request.HasField("election_id")):
            raise RpcError(code_pb2.PERMISSION_DENIED, "Not primary")

    def _bind(self, state: RuntimeState) -> None:
        """Attach to a newly installed state: codec, controller headers, digest delivery."""
        self._codec = EntityCodec(state)
        self._packet_in = ControllerHeader.from_p4info(state.p4info, "packet_in")
        self._packet_out = ControllerHeader.from_p4info(state.p4info, "packet_out")
        self._digest_struct = {d.preamble.id: d.type_spec.WhichOneof("type_spec") in ("struct", "tuple")
                               for d in state.p4info.digests}
        for digest in state.digests:
            digest.sink = self._on_digest
            digest.on_pending = self._timer_kick.set
        timers = len(state.digests) > 0 or any(t.supports_idle_timeout for t in state.tables)
        if timers and self._poller is None:
            self._poller = threading.Thread(target=self._housekeeping, name="p4rt-timers", daemon=True)
            self._poller.start()

    def close(self) -> None:
        self._stop.set()
        self._timer_kick.set()
        for stream in self.arbitrator.streams():
            stream.close()

    # -- unary RPCs ------------------------------------------------------------------------------------------------
    def Capabilities(self, request: p4runtime_pb2.CapabilitiesRequest, context: grpc.ServicerContext
                     ) -> p4runtime_pb2.CapabilitiesResponse:
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=api_version())

    def SetForwardingPipelineConfig(self, request: p4runtime_pb2.SetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext) -> p4runtime_pb2.SetForwardingPipelineConfigResponse:
        try:
            self._check_device(request.device_id)
            self._require_primary(request)
            self._set_pipeline(request)
        except RpcError as exc:
            _fail(context, exc.code, exc.message)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _set_pipeline(self, request: p4runtime_pb2.SetForwardingPipelineConfigRequest) -> None:
        action = request.action
        if action == SetAction.UNSPECIFIED or action not in SetAction.Action.values():
            raise RpcError(code_pb2.INVALID_ARGUMENT, "invalid SetForwardingPipelineConfig action")
        with self._pipeline_lock:
            if action == SetAction.COMMIT:
                if self.saved is None:
                    raise RpcError(code_pb2.FAILED_PRECONDITION, "COMMIT without a saved config (VERIFY_AND_SAVE)")
                config, self.saved = self.saved, None
                self._commit(config, reconcile=False)
                return
            config = pipeline.from_request(request.config)
            pipeline.verify(config)
            if action == SetAction.VERIFY:
                return
            if action == SetAction.VERIFY_AND_SAVE:
                self.saved = config
                return
            self._commit(config, reconcile=action == SetAction.RECONCILE_AND_COMMIT)

    def _commit(self, config: pipeline.PipelineConfig, *, reconcile: bool) -> None:
        old = self.device.state
        saved = pipeline.snapshot(old) if reconcile and old is not None else []
        pipeline.install(self.device, config)
        state = self.device.state
        if state is None:
            raise RpcError(code_pb2.INTERNAL, "the device installed no pipeline state")
        if old is not None:
            for digest in old.digests:
                digest.sink = None
                digest.on_pending = None
        self.config = config
        self._bind(state)
        if reconcile and old is not None:
            kept = pipeline.restore(state, saved)
            externs = pipeline.carry_externs(old, state)
            _log.info("reconcile: kept %d of %d entities and %d registers/counters", kept, len(saved), externs)

    def GetForwardingPipelineConfig(self, request: p4runtime_pb2.GetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext) -> p4runtime_pb2.GetForwardingPipelineConfigResponse:
        response = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        try:
            self._check_device(request.device_id)
            config = self.config
            if config is None:
                raise RpcError(code_pb2.FAILED_PRECONDITION, "No forwarding pipeline config set for this device")
            out = response.config
            kind = request.response_type
            if kind in (GetType.ALL, GetType.P4INFO_AND_COOKIE):
                out.p4info.MergeFromString(config.p4info_bytes)
            if kind in (GetType.ALL, GetType.DEVICE_CONFIG_AND_COOKIE):
                out.p4_device_config = config.device_config
            if config.cookie is not None:
                out.cookie.cookie = config.cookie
        except RpcError as exc:
            _fail(context, exc.code, exc.message)
        return response

    def Write(self, request: p4runtime_pb2.WriteRequest, context: grpc.ServicerContext) -> p4runtime_pb2.WriteResponse:
        try:
            self._check_device(request.device_id)
            self._require_primary(request)
            codec = self._codec_or_fail()
            if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
                raise RpcError(code_pb2.UNIMPLEMENTED, "only CONTINUE_ON_ERROR atomicity is supported")
            results = apply_updates(codec, request.updates)
            if any(r is not None for r in results):
                details = [_p4_error(r) for r in results]
                _fail(context, code_pb2.UNKNOWN, "Write failure.", details)
        except RpcError as exc:
            _fail(context, exc.code, exc.message)
        return p4runtime_pb2.WriteResponse()

    def Read(self, request: p4runtime_pb2.ReadRequest, context: grpc.ServicerContext
             ) -> Iterator[p4runtime_pb2.ReadResponse]:
        responses = [p4runtime_pb2.ReadResponse()]

        def alloc() -> p4runtime_pb2.Entity:
            """Results are built in place in the responses, _READ_CHUNK entities per response message."""
            if len(responses[-1].entities) >= _READ_CHUNK:
                responses.append(p4runtime_pb2.ReadResponse())
            return responses[-1].entities.add()

        try:
            self._check_device(request.device_id)
            codec = self._codec_or_fail()
            for entity in request.entities:
                codec.read(entity, alloc)
        except RpcError as exc:
            _fail(context, exc.code, exc.message)
            return
        except RuntimeStateError as exc:
            _fail(context, exc.code, str(exc))
            return
        except Exception as exc:  # a bug answers INTERNAL; the server keeps serving
            _log.exception("read failed unexpectedly")
            _fail(context, code_pb2.INTERNAL, f"internal error: {type(exc).__name__}: {exc}")
            return
        yield from responses

    # -- stream ------------------------------------------------------------------------------------------------------
    def StreamChannel(self, request_iterator: Iterator[p4runtime_pb2.StreamMessageRequest],
                      context: grpc.ServicerContext) -> Iterator[p4runtime_pb2.StreamMessageResponse]:
        stream = Stream(peer=context.peer())
        context.add_callback(stream.close)
        _log.info("P4Runtime stream opened by %s", stream.peer)  # as PI logs "New connection"
        reader = threading.Thread(target=self._read_stream, args=(stream, request_iterator),
                                  name="p4rt-stream", daemon=True)
        reader.start()
        try:
            while True:
                item = stream.outbox.get()
                if item is CLOSE:
                    return
                if isinstance(item, RpcError):
                    _fail(context, item.code, item.message)
                    return
                yield item
        finally:
            self.arbitrator.remove(stream)
            _log.info("P4Runtime stream of %s closed", stream.peer)

    def _read_stream(self, stream: Stream, requests: Iterator[p4runtime_pb2.StreamMessageRequest]) -> None:
        try:
            for request in requests:
                try:
                    self._handle_stream_message(stream, request)
                except RpcError as exc:
                    stream.fail(exc)
                    return
        except grpc.RpcError:
            pass  # the client went away
        except Exception:  # keep the server alive whatever a client sends
            _log.exception("stream %s failed", stream.peer)
        finally:
            self.arbitrator.remove(stream)
            stream.close()

    def _handle_stream_message(self, stream: Stream, request: p4runtime_pb2.StreamMessageRequest) -> None:
        kind = request.WhichOneof("update")
        if kind == "arbitration":
            self.arbitrator.arbitrate(stream, request.arbitration)
            return
        if stream.device_id is None:  # PI ignores these; a StreamError says why
            self._stream_error(stream, code_pb2.FAILED_PRECONDITION, "no arbitration update on this stream yet")
            return
        if kind == "packet":
            self._packet_out_from(stream, request.packet)
        elif kind == "digest_ack":
            self._digest_ack(stream, request.digest_ack)
        else:
            self._stream_error(stream, code_pb2.INVALID_ARGUMENT, f"invalid stream message request type {kind}")

    def _stream_error(self, stream: Stream, code: int, message: str, **detail: Any) -> None:
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.error.canonical_code, msg.error.message = code, message
        if "packet_out" in detail:
            msg.error.packet_out.packet_out.CopyFrom(detail["packet_out"])
        if "digest_list_ack" in detail:
            msg.error.digest_list_ack.digest_list_ack.CopyFrom(detail["digest_list_ack"])
        stream.send(msg)

    def _packet_out_from(self, stream: Stream, packet: p4runtime_pb2.PacketOut) -> None:
        if self.arbitrator.primary(stream.role) is not stream:
            self._stream_error(stream, code_pb2.PERMISSION_DENIED, "packet-out from a non-primary client",
                               packet_out=packet)
            return
        if self.device.state is None:
            self._stream_error(stream, code_pb2.FAILED_PRECONDITION, "no pipeline", packet_out=packet)
            return
        try:
            header = self._packet_out.build(list(packet.metadata)) if self._packet_out is not None else b""
        except RpcError as exc:
            self._stream_error(stream, exc.code, exc.message, packet_out=packet)
            return
        self.counters["packet_out"] += 1
        self.device.inject_packet_out(header + packet.payload)

    def _digest_ack(self, stream: Stream, ack: p4runtime_pb2.DigestListAck) -> None:
        state = self.device.state
        digest = state.digests.get(ack.digest_id) if state is not None and ack.digest_id else None
        if digest is None:
            self._stream_error(stream, code_pb2.INVALID_ARGUMENT, f"unknown digest id {ack.digest_id}",
                               digest_list_ack=ack)
            return
        digest.ack(ack.list_id)

    # -- switch -> controller -------------------------------------------------------------------------------------
    def _primary_stream(self) -> Stream | None:
        return self.arbitrator.primary("")

    def _on_packet_in(self, frame: bytes) -> None:
        primary = self._primary_stream()
        if primary is None:
            self.counters["packet_in_dropped"] += 1
            return
        if not self.policers["packet_in"].allow():
            self.counters["packet_in_policed"] += 1
            return
        if primary.outbox.qsize() >= MAX_BACKLOG:
            self.counters["stream_backlog_dropped"] += 1
            return
        msg = p4runtime_pb2.StreamMessageResponse()
        header = self._packet_in
        if header is not None:
            md, payload = header.parse(frame)
            msg.packet.metadata.extend(md)
            msg.packet.payload = payload
        else:
            msg.packet.payload = frame
        self.counters["packet_in"] += 1
        primary.send(msg)

    def _on_digest(self, digest_list: DigestList) -> None:
        primary = self._primary_stream()
        if primary is None:
            self.counters["digest_lists_dropped"] += 1
            return
        if not self.policers["digest"].allow():
            self.counters["digest_lists_policed"] += 1
            return
        if primary.outbox.qsize() >= MAX_BACKLOG:
            self.counters["stream_backlog_dropped"] += 1
            return
        msg = p4runtime_pb2.StreamMessageResponse()
        dl = msg.digest
        dl.digest_id, dl.list_id, dl.timestamp = digest_list.digest_id, digest_list.list_id, digest_list.timestamp_ns
        is_struct = self._digest_struct.get(digest_list.digest_id, True)
        for sample in digest_list.data:
            data = dl.data.add()
            if is_struct:
                data.struct.members.extend(p4data_pb2.P4Data(bitstring=encode_bytes(v)) for v in sample)
            else:
                data.bitstring = encode_bytes(sample[0])
        self.counters["digest_lists"] += 1
        primary.send(msg)

    def _housekeeping(self) -> None:
        """Timers: digest batches and ack timeouts (every 2 ms while a digest holds a sample or awaits an ack),
        idle timeout notifications (every 100 ms). While every digest is idle the thread sleeps until the next
        sweep or until a push leaves a digest work (`DigestState.on_pending`): an idle switch wakes it 10 times a
        second, not 500 (polling every 2 ms cost an idle switch about 3% of a core)."""
        next_sweep = time.monotonic() + _IDLE_SWEEP_S
        while not self._stop.is_set():
            self._timer_kick.clear()  # before the polls: a push after it sets it again, and the polls below see
            busy = False  # everything pushed before it
            state = self.device.state
            if state is not None:
                now_ns = self._device_now_ns()
                for digest in state.digests:
                    try:
                        digest.poll(now_ns)
                    except Exception:  # a broken sink must not stop digest delivery for good
                        _log.exception("digest %s", digest.name)
                    busy = busy or not digest.idle()
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + _IDLE_SWEEP_S
                    try:
                        self._notify_idle(state)
                    except Exception:
                        _log.exception("idle timeout notification")
            self._timer_kick.wait(_DIGEST_POLL_S if busy else max(next_sweep - time.monotonic(), 0.0))

    def _device_now_ns(self) -> int:
        """The clock the data path stamps digests with (the switch's `now_us`), else the monotonic clock."""
        now_us = getattr(self.device, "now_us", None)
        return int(now_us()) * 1000 if callable(now_us) else time.monotonic_ns()

    def _notify_idle(self, state: RuntimeState) -> None:
        codec = self._codec
        if codec is None or codec.state is not state:
            return
        now = time.monotonic_ns()
        msg = p4runtime_pb2.StreamMessageResponse()
        with state.lock:
            for table in state.tables:
                if table.supports_idle_timeout:
                    for entry in table.expired(now):
                        codec.entry_to_proto(table, entry, into=msg.idle_timeout_notification.table_entry.add())
        if not msg.HasField("idle_timeout_notification"):
            return
        msg.idle_timeout_notification.timestamp = now
        primary = self._primary_stream()
        if primary is not None:
            self.counters["idle_notifications"] += 1
            primary.send(msg)


def _p4_error(error: RuntimeStateError | None) -> p4runtime_pb2.Error:
    if error is None:
        return p4runtime_pb2.Error(canonical_code=code_pb2.OK)
    return p4runtime_pb2.Error(canonical_code=error.code, message=str(error), space="ALL-sswitch-p4org")
