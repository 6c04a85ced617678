"""Helpers for the P4Runtime target tests: a P4Runtime server on 127.0.0.1 with a free port, a minimal client
(stream with arbitration, writes that return per-update codes), and the conformance P4Info files."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import text_format
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

CONFORMANCE = Path(__file__).resolve().parent.parent / "conformance"


def load_p4info(name: str) -> p4info_pb2.P4Info:
    return text_format.Parse((CONFORMANCE / "p4info" / f"{name}.p4info.txtpb").read_text(), p4info_pb2.P4Info())


def code_name(code: int) -> str:
    return str(code_pb2.Code.Name(code))


def grpc_code_name(error: grpc.RpcError) -> str:
    return str(error.code().name)


def update_codes(error: grpc.RpcError) -> list[str]:
    """Per-update canonical codes from `grpc-status-details-bin` (empty when the server sent none)."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            codes = []
            for detail in status.details:
                err = p4runtime_pb2.Error()
                detail.Unpack(err)
                codes.append(code_name(err.canonical_code))
            return codes
    return []


class Client:
    """One P4Runtime client: a StreamChannel (arbitration, packets, digests) and the unary RPCs."""

    def __init__(self, address: str, *, device_id: int = 0, election_id: int = 1) -> None:
        self.device_id = device_id
        self.election_id = election_id
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._out: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        self.inbox: dict[str, queue.Queue[Any]] = {k: queue.Queue() for k in ("arbitration", "packet", "digest", "error",
                                                                        "idle_timeout_notification")}
        self.stream_error: grpc.RpcError | None = None
        self._stream = self.stub.StreamChannel(self._requests())
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _requests(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            msg = self._out.get()
            if msg is None:
                return
            yield msg

    def _read(self) -> None:
        try:
            for msg in self._stream:
                self.inbox[msg.WhichOneof("update")].put(msg)
        except grpc.RpcError as exc:
            self.stream_error = exc
        for q in self.inbox.values():
            q.put(None)

    def arbitrate(self, election_id: int | None = None, timeout: float = 5.0) -> p4runtime_pb2.StreamMessageResponse:
        if election_id is not None:
            self.election_id = election_id
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = self.device_id
        msg.arbitration.election_id.high = self.election_id >> 64
        msg.arbitration.election_id.low = self.election_id & ((1 << 64) - 1)
        self._out.put(msg)
        return self.next("arbitration", timeout)

    def send(self, msg: p4runtime_pb2.StreamMessageRequest) -> None:
        self._out.put(msg)

    def next(self, kind: str, timeout: float = 5.0) -> Any:
        return self.inbox[kind].get(timeout=timeout)

    def _election(self, msg: Any) -> None:
        msg.election_id.high = self.election_id >> 64
        msg.election_id.low = self.election_id & ((1 << 64) - 1)

    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes = b"",
                     action: int = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id, action=action)
        self._election(req)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        self.stub.SetForwardingPipelineConfig(req, timeout=30)

    def write(self, request: p4runtime_pb2.WriteRequest) -> tuple[str, list[str]]:
        """(top-level code, per-update codes) for a WriteRequest."""
        try:
            self.stub.Write(request, timeout=10)
            return "OK", []
        except grpc.RpcError as exc:
            return grpc_code_name(exc), update_codes(exc)

    def write_updates(self, *updates: p4runtime_pb2.Update) -> tuple[str, list[str]]:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id, updates=updates)
        self._election(req)
        return self.write(req)

    def read(self, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=entities)
        out: list[p4runtime_pb2.Entity] = []
        for response in self.stub.Read(req, timeout=60):
            out.extend(response.entities)
        return out

    def close(self) -> None:
        self._out.put(None)
        self._stream.cancel()
        self._reader.join(timeout=5)
        self.channel.close()


def table_update(kind: int, text: str) -> p4runtime_pb2.Update:
    """An Update whose entity is given in text format, e.g. `table_entry { ... }`."""
    update = p4runtime_pb2.Update(type=kind)
    text_format.Parse(text, update.entity)
    return update


def entity(text: str) -> p4runtime_pb2.Entity:
    return text_format.Parse(text, p4runtime_pb2.Entity())


@contextmanager
def live_switch(source: str, name: str, on_output: Callable[[int, bytes], None] | None = None
                ) -> Iterator[tuple[Any, Any, Client]]:
    """(compiled program, started embedded switch, primary client that pushed the pipeline) for P4 `source`, with
    the switch's P4Runtime server on loopback; `on_output` sees every packet the switch sends. All stopped on exit."""
    from p4switch import compiler
    from p4switch.server import P4RuntimeServer
    from p4switch.switch import core

    program = compiler.compile_text(source, name)
    switch = core.Switch()
    if on_output is not None:
        switch.add_output_callback(on_output)
    switch.start()
    server = P4RuntimeServer(switch, address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=1)
    try:
        assert code_name(client.arbitrate().arbitration.status.code) == "OK"
        client.set_pipeline(program.p4info, program.device_config_bytes())
        yield program, switch, client
    finally:
        client.close()
        server.stop()
        switch.stop()
