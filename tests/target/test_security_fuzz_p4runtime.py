"""10,000 invalid P4Runtime requests against a live server (and 2,000 invalid stream messages): seeded mutations of the recorded conformance requests
(Write, Read, SetForwardingPipelineConfig), sent as raw bytes. Only requests that are invalid are sent: bytes that are
no protobuf, requests for another device or with a foreign election id or an unsupported atomicity, Writes whose every
update an offline copy of the switch's state refuses, pipeline configs that fail verification, and mangled Reads.
Afterwards the switch's state (entries, defaults, groups, sessions, counters, meters, registers, digests) is exactly
what it was, the server still answers every RPC, and the primary still writes."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from p4.v1 import p4runtime_pb2
from p4runtime_support import CONFORMANCE, Client, entity, load_p4info

from p4switch.runtime.entries import EntityCodec, apply_updates
from p4switch.runtime.state import RuntimeState
from p4switch.server import P4RuntimeServer, StateDevice, pipeline
from p4switch.server.errors import RpcError

TOTAL = 10_000
ELECTION = 1
SNAPSHOT = ("table_entry { }", "table_entry { is_default_action: true }",
            "packet_replication_engine_entry { multicast_group_entry { } }",
            "packet_replication_engine_entry { clone_session_entry { } }",
            "counter_entry { }", "meter_entry { }", "register_entry { }", "digest_entry { }")


def _requests(rpc: str, kind: type[Any]) -> list[Any]:
    out = []
    for line in (CONFORMANCE / "p4runtime" / "runtime_tables.jsonl").read_text().splitlines():
        step = json.loads(line)
        if step["rpc"] == rpc and "request" in step:
            request = text_format.Parse(step["request"], kind())
            if hasattr(request, "election_id"):
                request.election_id.low, request.election_id.high = ELECTION, 0
            out.append(request)
    return out


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        if op == 0 and buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            del buf[rng.randrange(len(buf)):]
        elif op == 2:
            other = rng.choice(pool)
            buf += other[rng.randrange(len(other) + 1):]
        elif op == 3 and buf:
            buf[rng.randrange(len(buf))] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        else:
            at = rng.randrange(len(buf) + 1)
            buf[at:at] = rng.randbytes(rng.randrange(1, 9))
    return bytes(buf)


_EDGE_INTS = (0, 1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 127, 128, 255, 256, 511, 512, 4095, 32767, 32768, 65535, 2**31 - 1)


def _scalar_fields(msg: Message, out: list[tuple[Message, FieldDescriptor]]) -> None:
    """Every (message, field) pair under `msg` whose field is set and scalar, and every repeated message field."""
    for field, value in msg.ListFields():
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            out.append((msg, field))
            for item in (value if field.label == FieldDescriptor.LABEL_REPEATED else [value]):
                _scalar_fields(item, out)
        elif field.label != FieldDescriptor.LABEL_REPEATED:
            out.append((msg, field))


def mutate_fields(rng: random.Random, request: Message) -> bytes:
    """Structure-aware mutation: decodable requests with ids, widths, prefixes, masks, priorities, types and
    repeated elements set to edge values, cleared or duplicated."""
    msg = type(request)()
    msg.CopyFrom(request)
    for _ in range(rng.randint(1, 3)):
        fields: list[tuple[Message, FieldDescriptor]] = []
        _scalar_fields(msg, fields)
        if not fields:
            break
        owner, field = rng.choice(fields)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.label == FieldDescriptor.LABEL_REPEATED:
                items = getattr(owner, field.name)
                if items and rng.random() < 0.5:
                    items.add().CopyFrom(items[rng.randrange(len(items))])  # duplicate
                elif items:
                    del items[rng.randrange(len(items))]
            else:
                owner.ClearField(field.name)
        elif field.type == FieldDescriptor.TYPE_BYTES:
            setattr(owner, field.name, rng.choice((b"", b"\x00", b"\xff" * rng.randint(1, 20), rng.randbytes(rng.randint(1, 9)))))
        elif field.type == FieldDescriptor.TYPE_STRING:
            setattr(owner, field.name, rng.choice(("", "x" * rng.randint(1, 64), "\u00e9\u0000")))
        elif field.type == FieldDescriptor.TYPE_BOOL:
            setattr(owner, field.name, not getattr(owner, field.name))
        elif field.type == FieldDescriptor.TYPE_ENUM:
            setattr(owner, field.name, rng.choice([v.number for v in field.enum_type.values]))
        elif field.type in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT32,
                            FieldDescriptor.TYPE_SINT64):
            setattr(owner, field.name, rng.choice((*_EDGE_INTS, -1, -(2**31), rng.randrange(-1000, 1000))))
        else:  # unsigned
            value = rng.choice((*_EDGE_INTS, getattr(owner, field.name) + rng.choice((-1, 1)),
                                getattr(owner, field.name) ^ (1 << rng.randrange(32))))
            setattr(owner, field.name, max(0, value))
    return msg.SerializeToString()


def refused_whole(request: Any) -> bool:
    """Another device (NOT_FOUND) or not the primary's election id (PERMISSION_DENIED). The id is compared by
    value: a mutated Uint128 may carry unknown fields, which the server ignores."""
    election = request.election_id
    return bool(request.device_id != 0 or not request.HasField("election_id")
                or (election.high, election.low) != (0, ELECTION))


class Oracle:
    """An offline copy of the switch's state, to tell whether a Write would change anything (refused whole, or every
    update refused: invalid) before it is sent."""

    def __init__(self, seeds: list[p4runtime_pb2.WriteRequest]) -> None:
        self.seeds = seeds
        self._fresh()

    def _fresh(self) -> None:
        self.codec = EntityCodec(RuntimeState.from_p4info(load_p4info("runtime_tables")))
        for request in self.seeds:
            apply_updates(self.codec, request.updates)

    def snapshot(self) -> list[p4runtime_pb2.Entity]:
        return [e for text in SNAPSHOT for e in self.codec.read(entity(text))]

    def write_is_invalid(self, request: p4runtime_pb2.WriteRequest) -> bool:
        if refused_whole(request):
            return True
        if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
            return True  # UNIMPLEMENTED
        if not request.updates:
            return False  # a valid no-op
        results = apply_updates(self.codec, request.updates)
        if all(r is not None for r in results):
            return True
        self._fresh()  # something applied: throw the copy away, and the request
        return False


def test_10k_invalid_requests_leave_the_state_unchanged_and_the_server_answering() -> None:
    p4info = load_p4info("runtime_tables")
    server = P4RuntimeServer(StateDevice(), address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=ELECTION)
    try:
        client.arbitrate()
        client.set_pipeline(p4info)
        writes = _requests("Write", p4runtime_pb2.WriteRequest)
        applied = [w for w in writes if client.write(w)[0] in ("OK", "UNKNOWN")]  # UNKNOWN: per-update answers
        before = client.read(*(entity(t) for t in SNAPSHOT))
        assert len(before) >= 5  # entries, defaults, a group and a session the transcript leaves behind

        oracle = Oracle(applied)
        assert oracle.snapshot() == before, "the offline copy starts as the switch's state"
        write_pool = [w.SerializeToString() for w in writes]
        reads = _requests("Read", p4runtime_pb2.ReadRequest)
        read_pool = [r.SerializeToString() for r in reads]
        config = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        config.election_id.low = ELECTION
        config.config.p4info.CopyFrom(p4info)
        config_pool = [config.SerializeToString()]
        rpc_write = client.channel.unary_unary("/p4.v1.P4Runtime/Write")
        rpc_read = client.channel.unary_stream("/p4.v1.P4Runtime/Read")
        rpc_set = client.channel.unary_unary("/p4.v1.P4Runtime/SetForwardingPipelineConfig")

        def invalid_set(data: bytes) -> bool:
            """Refused whole: undecodable, another device or election id, COMMIT with nothing saved (no valid
            VERIFY_AND_SAVE is ever sent), an unknown action, or a config that fails verification."""
            try:
                request = p4runtime_pb2.SetForwardingPipelineConfigRequest.FromString(data)
            except (DecodeError, UnicodeDecodeError):  # what grpc answers with INTERNAL (cannot deserialize)
                return True
            if refused_whole(request):
                return True
            if request.action in (config.UNSPECIFIED, config.COMMIT) or request.action not in config.Action.values():
                return True
            try:
                pipeline.verify(pipeline.from_request(request.config))
            except RpcError:
                return True
            return False

        def invalid_write(data: bytes) -> bool:
            try:
                request = p4runtime_pb2.WriteRequest.FromString(data)
            except (DecodeError, UnicodeDecodeError):  # what grpc answers with INTERNAL (cannot deserialize)
                return True
            return oracle.write_is_invalid(request)

        rng = random.Random(20261129)
        sent: dict[str, int] = {"Write": 0, "Read": 0, "SetForwardingPipelineConfig": 0}
        codes: dict[str, int] = {}
        while sum(sent.values()) < TOTAL:
            pick = rng.random()
            call: Callable[[bytes], object]
            if pick < 0.75:
                if rng.random() < 0.75:
                    data = mutate_fields(rng, rng.choice(writes))
                else:
                    data = mutate(rng, rng.choice(write_pool), write_pool)
                name = "Write"
                if not invalid_write(data):
                    continue
                call = lambda d: rpc_write(d, timeout=10)  # noqa: E731
            elif pick < 0.95:
                name = "Read"
                data = mutate_fields(rng, rng.choice(reads)) if rng.random() < 0.5 else \
                    mutate(rng, rng.choice(read_pool), read_pool)
                call = lambda d: list(rpc_read(d, timeout=10))  # noqa: E731
            else:
                name = "SetForwardingPipelineConfig"
                data = mutate_fields(rng, config) if rng.random() < 0.5 else mutate(rng, config_pool[0], config_pool)
                if not invalid_set(data):
                    continue
                call = lambda d: rpc_set(d, timeout=10)  # noqa: E731
            sent[name] += 1
            try:
                call(data)
                codes["OK"] = codes.get("OK", 0) + 1
            except grpc.RpcError as exc:
                code = exc.code().name
                assert code != "INTERNAL" or "deserializ" in (exc.details() or "").lower(), (name, exc.details())
                codes[code] = codes.get(code, 0) + 1
        print(f"sent {sent}, answers {codes}")
        assert sum(sent.values()) == TOTAL and min(sent.values()) > 0
        assert codes.get("UNKNOWN", 0) > 1000 and codes.get("INVALID_ARGUMENT", 0) > 100, codes

        after = client.read(*(entity(t) for t in SNAPSHOT))
        assert after == before, "invalid requests changed the switch's state"
        assert client.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=10).p4runtime_api_version
        route = ('table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\013\\000\\000\\000" '
                 'prefix_len: 8 } } action { action { action_id: 28749719 params { param_id: 1 value: "\\003" } } } }')
        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=entity(route))
        assert client.write_updates(update) == ("OK", [])
    finally:
        client.close()
        server.stop()


class RawStream:
    """A StreamChannel carrying raw bytes; answers are counted by a reader thread; `alive` turns False when the
    server ends the stream (then a new one is opened)."""

    def __init__(self, channel: grpc.Channel) -> None:
        import queue
        import threading

        self.outbox: queue.Queue[bytes | None] = queue.Queue()
        self.answers = 0
        self.ended: str | None = None
        call = channel.stream_stream("/p4.v1.P4Runtime/StreamChannel")
        self._call = call(iter(self.outbox.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for _ in self._call:
                self.answers += 1
            self.ended = "OK"
        except grpc.RpcError as exc:
            self.ended = exc.code().name

    def close(self) -> None:
        self.outbox.put(None)
        self._reader.join(10)


def test_invalid_stream_messages_never_break_the_server() -> None:
    """2,000 mutated StreamMessageRequests (arbitration, packet-out, digest ack; raw bytes, on one stream after
    another as the server ends them): the server ends a stream only with a proper status, keeps its state and
    keeps serving, and a well-behaved controller then arbitrates and writes."""
    p4info = load_p4info("runtime_tables")
    device = StateDevice(cpu_port=255)
    server = P4RuntimeServer(device, address="127.0.0.1:0").start()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    setup = Client(f"127.0.0.1:{server.port}", election_id=ELECTION)
    try:
        setup.arbitrate()
        setup.set_pipeline(p4info)
        writes = _requests("Write", p4runtime_pb2.WriteRequest)
        for request in writes:
            setup.write(request)
        before = setup.read(*(entity(t) for t in SNAPSHOT))
        setup.close()

        seeds = [p4runtime_pb2.StreamMessageRequest(), p4runtime_pb2.StreamMessageRequest(),
                 p4runtime_pb2.StreamMessageRequest()]
        seeds[0].arbitration.device_id = 0
        seeds[0].arbitration.election_id.low = 7
        seeds[1].packet.payload = bytes(range(64))
        seeds[1].packet.metadata.add(metadata_id=1, value=b"\x01")
        seeds[2].digest_ack.digest_id, seeds[2].digest_ack.list_id = 1, 1
        pool = [s.SerializeToString() for s in seeds]
        rng = random.Random(99)
        stream = RawStream(channel)
        stream.outbox.put(pool[0])  # most later messages act on an arbitrated stream
        ends: dict[str, int] = {}
        for _ in range(2000):
            if stream.ended is not None:
                ends[stream.ended] = ends.get(stream.ended, 0) + 1
                stream.close()
                stream = RawStream(channel)
                stream.outbox.put(pool[0])
            kind = rng.randrange(3)
            data = mutate_fields(rng, seeds[kind]) if rng.random() < 0.6 else mutate(rng, pool[kind], pool)
            stream.outbox.put(data)
        stream.close()
        assert set(ends) <= {"OK", "INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED",
                             "INTERNAL", "CANCELLED"}, ends
        deadline = time.monotonic() + 10
        while server.stats()["streams"] and time.monotonic() < deadline:  # the fuzzing streams are gone
            time.sleep(0.02)
        client = Client(f"127.0.0.1:{server.port}", election_id=1000)
        try:
            assert client.arbitrate().arbitration.status.code == 0  # the only stream: primary
            assert client.read(*(entity(t) for t in SNAPSHOT)) == before
            route = ('table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\013\\000\\000\\000" '
                     'prefix_len: 8 } } action { action { action_id: 28749719 params { param_id: 1 value: "\\003" } } '
                     '} }')
            update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=entity(route))
            assert client.write_updates(update) == ("OK", [])
        finally:
            client.close()
    finally:
        channel.close()
        server.stop()
