"""A P4Runtime client that behaves as p4lang/tutorials' `utils/p4runtime_lib` does toward a switch, written for
p4ina's tests (no code taken from the tutorials): the traits a server has to cope with are what matters.

- The stream's requests come from a queue; `shutdown()` ends that queue (a half-close) and returns at once,
  without waiting for the server to end the stream. The next connection may follow immediately.
- Arbitration always uses election id high=0 low=1 and blocks until the first arbitration answer arrives.
- SetForwardingPipelineConfig is VERIFY_AND_COMMIT with election id 1 and the device config wrapped in PI's
  `p4.tmp.P4DeviceConfig` (`reassign = 1`, `device_data = 3`; encoded by hand below, there is no Python module for
  it in the `p4runtime` package) or, with `wrap=False`, the raw JSON as newer tutorials send it.
- Writes carry election id 1; a default action is a MODIFY, everything else an INSERT.
- `PtfStyleConnection` is the other client the tutorials' PTF suites use (PI's base_test): arbitration without an
  election id, writes without one, and a teardown that waits for the server to end the stream.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

_END = object()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def p4_device_config(device_data: bytes, reassign: bool = True) -> bytes:
    """PI's `p4.tmp.P4DeviceConfig {bool reassign = 1; Extras extras = 2; bytes device_data = 3;}` in protobuf wire
    format: field 1 varint, field 3 length-delimited."""
    head = b"\x08\x01" if reassign else b""
    return head + b"\x1a" + _varint(len(device_data)) + device_data


class TutorialConnection:
    """One switch connection as p4runtime_lib's `SwitchConnection` makes it."""

    def __init__(self, address: str, device_id: int = 0) -> None:
        self.address = address
        self.device_id = device_id
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._requests: queue.Queue[Any] = queue.Queue()
        self.arbitrations: queue.Queue[p4runtime_pb2.MasterArbitrationUpdate] = queue.Queue()
        self.packets: queue.Queue[p4runtime_pb2.PacketIn] = queue.Queue()
        self.errors: queue.Queue[Any] = queue.Queue()
        self.stream_ended = threading.Event()
        self.stream_error: grpc.RpcError | None = None
        self._responses = self.stub.StreamChannel(self._request_iter())
        self._dispatcher = threading.Thread(target=self._dispatch, daemon=True)
        self._dispatcher.start()

    def _request_iter(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            item = self._requests.get()
            if item is _END:
                return
            yield item

    def _dispatch(self) -> None:
        try:
            for msg in self._responses:
                kind = msg.WhichOneof("update")
                if kind == "arbitration":
                    self.arbitrations.put(msg.arbitration)
                elif kind == "packet":
                    self.packets.put(msg.packet)
                elif kind == "error":
                    self.errors.put(msg.error)
        except grpc.RpcError as exc:
            self.stream_error = exc
        finally:
            self.stream_ended.set()

    def master_arbitration_update(self, timeout: float = 10.0) -> p4runtime_pb2.MasterArbitrationUpdate:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.high = 0
        request.arbitration.election_id.low = 1
        self._requests.put(request)
        return self.arbitrations.get(timeout=timeout)

    def set_forwarding_pipeline_config(self, p4info: p4info_pb2.P4Info, device_config: bytes, *,
                                       wrap: bool = True) -> None:
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest()
        request.election_id.low = 1
        request.device_id = self.device_id
        request.config.p4info.CopyFrom(p4info)
        request.config.p4_device_config = p4_device_config(device_config) if wrap else device_config
        request.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        self.stub.SetForwardingPipelineConfig(request, timeout=60)

    def write_table_entry(self, entry: p4runtime_pb2.TableEntry) -> None:
        request = p4runtime_pb2.WriteRequest()
        request.device_id = self.device_id
        request.election_id.low = 1
        update = request.updates.add()
        update.type = p4runtime_pb2.Update.MODIFY if entry.is_default_action else p4runtime_pb2.Update.INSERT
        update.entity.table_entry.CopyFrom(entry)
        self.stub.Write(request, timeout=30)

    def read_table_entries(self, table_id: int = 0) -> list[p4runtime_pb2.TableEntry]:
        request = p4runtime_pb2.ReadRequest()
        request.device_id = self.device_id
        request.entities.add().table_entry.table_id = table_id
        return [e.table_entry for r in self.stub.Read(request, timeout=30) for e in r.entities]

    def shutdown(self) -> None:
        """Half-close the stream and return without waiting, as p4runtime_lib's `shutdown()` does."""
        self._requests.put(_END)

    def close_channel(self) -> None:
        """The client process going away: the channel closes with the stream still open (no half-close)."""
        self.channel.close()


class PtfStyleConnection:
    """PI's PTF `P4RuntimeTest` (used by the tutorials' PTF suites): no election id anywhere, and a teardown
    that half-closes and then waits for the server to end the stream."""

    def __init__(self, address: str, device_id: int = 0) -> None:
        self.device_id = device_id
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._out: queue.Queue[Any] = queue.Queue()
        self.inbox: queue.Queue[p4runtime_pb2.StreamMessageResponse] = queue.Queue()
        self._stream = self.stub.StreamChannel(self._requests())
        self._receiver = threading.Thread(target=self._receive, daemon=True)
        self._receiver.start()

    def _requests(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            item = self._out.get()
            if item is None:
                return
            yield item

    def _receive(self) -> None:
        try:
            for msg in self._stream:
                self.inbox.put(msg)
        except grpc.RpcError:
            pass

    def handshake(self, timeout: float = 2.0) -> p4runtime_pb2.StreamMessageResponse | None:
        """PI's handshake: an arbitration with the device id only; waits 2 s for the answer."""
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        self._out.put(request)
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def write(self, request: p4runtime_pb2.WriteRequest) -> None:
        request.device_id = self.device_id
        self.stub.Write(request, timeout=30)

    def tear_down(self, timeout: float) -> bool:
        """Half-close and wait for the server to end the stream (PI's base_test joins the receiving thread)."""
        self._out.put(None)
        self._receiver.join(timeout)
        ended = not self._receiver.is_alive()
        self.channel.close()
        return ended
