"""The controller's P4Runtime client against switches that misbehave: fake gRPC servers (raw-bytes handlers for the
p4.v1.P4Runtime methods) that hang, answer garbage bytes, or attach garbage error details, and a TCP port that
speaks no gRPC at all. Every call ends within its timeout with a one-line controller error; nothing waits without
bound (each call runs in a thread that must finish well inside a generous limit)."""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from controller.client import SwitchClient
from controller.exceptions import ControllerError, SwitchUnavailableError
from controller.exceptions import RpcError as ControllerRpcError

SERVICE = "p4.v1.P4Runtime"
UNARY = ("Capabilities", "Write", "SetForwardingPipelineConfig", "GetForwardingPipelineConfig")
TIMEOUT = 1.0
LIMIT = 30.0  # a hung call would never finish; a bounded one ends after about TIMEOUT


class FakeSwitch:
    """A gRPC server whose P4Runtime methods are `unary(method, request_bytes, context)` and `stream(...)` on raw
    bytes, so that it can answer anything, including bytes that are no protobuf at all."""

    def __init__(self, unary: Callable[[str, bytes, grpc.ServicerContext], bytes],
                 stream: Callable[[Iterator[bytes], grpc.ServicerContext], Iterator[bytes]]) -> None:
        handlers: dict[str, grpc.RpcMethodHandler] = {
            m: grpc.unary_unary_rpc_method_handler(lambda req, ctx, m=m: unary(m, req, ctx)) for m in UNARY}
        handlers["Read"] = grpc.unary_stream_rpc_method_handler(lambda req, ctx: iter([unary("Read", req, ctx)]))
        handlers["StreamChannel"] = grpc.stream_stream_rpc_method_handler(stream)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop(0).wait()


def bounded(fn: Callable[[], Any]) -> BaseException | None:
    """Run `fn` in a thread; it must end (normally or by raising) within LIMIT. Returns what it raised."""
    box: list[BaseException | None] = [None]

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # handed to the test
            box[0] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(LIMIT)
    assert not t.is_alive(), "the controller call waited without bound"
    return box[0]


def _one_line(exc: BaseException | None) -> str:
    assert isinstance(exc, ControllerError), f"expected a controller error, got {exc!r}"
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    return text


def primary_stream(requests: Iterator[bytes], ctx: grpc.ServicerContext) -> Iterator[bytes]:
    """Answer the first arbitration with OK (the client becomes primary), then read until the client leaves."""
    first = next(iter(requests), None)
    if first is None:
        return
    request = p4runtime_pb2.StreamMessageRequest.FromString(first)
    answer = p4runtime_pb2.StreamMessageResponse()
    answer.arbitration.CopyFrom(request.arbitration)
    answer.arbitration.status.code = 0
    yield answer.SerializeToString()
    for _ in requests:
        pass


def capabilities() -> bytes:
    return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version="1.4.1").SerializeToString()


@pytest.fixture
def fakes() -> Iterator[list[FakeSwitch]]:
    made: list[FakeSwitch] = []
    yield made
    for f in made:
        f.stop()


def test_a_switch_that_hangs_every_call(fakes: list[FakeSwitch]) -> None:
    release = threading.Event()

    def hang(method: str, request: bytes, ctx: grpc.ServicerContext) -> bytes:
        release.wait(LIMIT)
        return b""

    def hang_stream(requests: Iterator[bytes], ctx: grpc.ServicerContext) -> Iterator[bytes]:
        release.wait(LIMIT)
        return iter(())

    fake = FakeSwitch(hang, hang_stream)
    fakes.append(fake)
    try:
        err = bounded(lambda: SwitchClient("s1", fake.address, timeout=TIMEOUT).connect())
        assert isinstance(err, SwitchUnavailableError)
        assert "DEADLINE_EXCEEDED" in _one_line(err)
    finally:
        release.set()


def test_a_switch_that_answers_capabilities_then_never_arbitrates(fakes: list[FakeSwitch]) -> None:
    def unary(method: str, request: bytes, ctx: grpc.ServicerContext) -> bytes:
        return capabilities()

    def silent(requests: Iterator[bytes], ctx: grpc.ServicerContext) -> Iterator[bytes]:
        for _ in requests:  # read everything, answer nothing
            pass
        return iter(())

    fake = FakeSwitch(unary, silent)
    fakes.append(fake)
    err = bounded(lambda: SwitchClient("s1", fake.address, timeout=TIMEOUT).connect())
    assert "no arbitration answer within" in _one_line(err)


def test_a_primary_session_whose_rpcs_hang(fakes: list[FakeSwitch]) -> None:
    release = threading.Event()

    def unary(method: str, request: bytes, ctx: grpc.ServicerContext) -> bytes:
        if method == "Capabilities":
            return capabilities()
        release.wait(LIMIT)
        return b""

    fake = FakeSwitch(unary, primary_stream)
    fakes.append(fake)
    client = SwitchClient("s1", fake.address, timeout=TIMEOUT).connect()
    try:
        assert client.is_primary
        for call in (lambda: client.write([p4runtime_pb2.Update()]), lambda: client.read([]),
                     lambda: client.get_pipeline()):
            err = bounded(call)
            assert isinstance(err, SwitchUnavailableError) and "DEADLINE_EXCEEDED" in _one_line(err)
    finally:
        release.set()
        client.close()


def test_a_switch_that_answers_garbage(fakes: list[FakeSwitch]) -> None:
    rng = random.Random(11)

    def junk(method: str, request: bytes, ctx: grpc.ServicerContext) -> bytes:
        if method == "Capabilities":
            return capabilities()
        return b"\xff\xff\xff" + rng.randbytes(rng.randrange(1, 200))  # never a valid protobuf (bad tag)

    def junk_stream(requests: Iterator[bytes], ctx: grpc.ServicerContext) -> Iterator[bytes]:
        next(iter(requests), None)
        yield b"\xff\xff\xff" + rng.randbytes(64)

    fake = FakeSwitch(junk, junk_stream)
    fakes.append(fake)
    err = bounded(lambda: SwitchClient("s1", fake.address, timeout=TIMEOUT).connect())
    assert isinstance(err, SwitchUnavailableError) and "ended the stream" in _one_line(err)
    rpcs = FakeSwitch(junk, primary_stream)  # a good stream, garbage answers to every RPC
    fakes.append(rpcs)
    client = SwitchClient("s1", rpcs.address, timeout=TIMEOUT).connect()
    try:
        for call in (lambda: client.write([p4runtime_pb2.Update()]), lambda: client.read([]),
                     lambda: client.get_pipeline()):
            err = bounded(call)
            assert isinstance(err, ControllerRpcError), repr(err)
            _one_line(err)
    finally:
        client.close()


def test_garbage_error_details_are_reported_not_crashed_on(fakes: list[FakeSwitch]) -> None:
    rng = random.Random(5)

    def bad_details(method: str, request: bytes, ctx: grpc.ServicerContext) -> bytes:
        if method == "Capabilities":
            return capabilities()
        ctx.set_trailing_metadata((("grpc-status-details-bin", rng.randbytes(48)),))
        ctx.abort(grpc.StatusCode.UNKNOWN, "Write failure.")
        return b""

    fake = FakeSwitch(bad_details, primary_stream)
    fakes.append(fake)
    client = SwitchClient("s1", fake.address, timeout=TIMEOUT).connect()
    try:
        for _ in range(20):
            err = bounded(lambda: client.write([p4runtime_pb2.Update()]))
            assert isinstance(err, ControllerRpcError) and "UNKNOWN" in _one_line(err)
    finally:
        client.close()


def test_a_port_that_speaks_no_grpc() -> None:
    """A TCP listener that accepts and sends junk (or nothing): connect fails within the timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            try:
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nnot grpc" + bytes(range(256)))
            except OSError:
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        err = bounded(lambda: SwitchClient("s1", address, timeout=TIMEOUT).connect())
        assert isinstance(err, SwitchUnavailableError)
        _one_line(err)
    finally:
        stop.set()
        t.join(5)
        listener.close()
