"""10,000 seeded mutations of the recorded conformance requests (Write, Read, SetForwardingPipelineConfig) sent as raw
bytes to a live server, every one of them, and 2,000 mutated stream messages. Each decodable Write is judged by the
spec oracle (`p4runtime_oracle`, which shares no code with the server): its codes must be ones the P4Runtime
specification allows, and the switch's state (entries, defaults, groups, sessions) must equal the oracle's model
afterwards. Bytes that are no protobuf must be refused as undecodable; pipeline configs go with action VERIFY (they
may pass or fail verification, never replace the pipeline). The server answers every RPC throughout and the primary
still writes at the end."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import grpc
from google.protobuf import text_format
from google.protobuf.message import DecodeError
from p4.v1 import p4runtime_pb2
from p4runtime_fuzzing import mutate_bytes, mutate_fields, new_checker
from p4runtime_support import CONFORMANCE, Client, entity, load_p4info

from p4switch.server import P4RuntimeServer, StateDevice

TOTAL = 10_000
ELECTION = 1
SNAPSHOT = ("table_entry { }", "table_entry { is_default_action: true }",
            "packet_replication_engine_entry { multicast_group_entry { } }",
            "packet_replication_engine_entry { clone_session_entry { } }",
            "counter_entry { }", "meter_entry { }", "register_entry { }", "digest_entry { }")
UNDECODABLE = (DecodeError, UnicodeDecodeError, RuntimeWarning)


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


def _decode(kind: type[Any], data: bytes) -> Any:
    try:
        return kind.FromString(data)
    except UNDECODABLE:
        return None


def _undecodable(rpc: Any, data: bytes, answers: dict[str, int]) -> None:
    """grpc refuses bytes that do not parse as the request type with INTERNAL (cannot deserialize)."""
    try:
        rpc(data, timeout=10)
        raise AssertionError(f"undecodable request accepted: {data!r}")
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.INTERNAL and "deserializ" in (exc.details() or "").lower(), exc.details()
    answers["undecodable"] = answers.get("undecodable", 0) + 1


def test_10k_mutated_requests_get_spec_answers_and_keep_the_state_the_oracle_predicts() -> None:
    p4info = load_p4info("runtime_tables")
    server = P4RuntimeServer(StateDevice(), address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=ELECTION)
    try:
        client.arbitrate()
        client.set_pipeline(p4info)
        checker = new_checker(client, p4info, ELECTION)
        writes = _requests("Write", p4runtime_pb2.WriteRequest)
        for request in writes:  # the transcript's own requests first: entries, a group and a session to fuzz against
            checker.write(request, "transcript")
        assert len(checker.model.everything()) >= 6
        write_pool = [w.SerializeToString() for w in writes]
        reads = _requests("Read", p4runtime_pb2.ReadRequest)
        read_pool = [r.SerializeToString() for r in reads]
        config = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY)
        config.election_id.low = ELECTION
        config.config.p4info.CopyFrom(p4info)
        rpc_write = client.channel.unary_unary("/p4.v1.P4Runtime/Write")
        rpc_read = client.channel.unary_stream("/p4.v1.P4Runtime/Read")
        rpc_set = client.channel.unary_unary("/p4.v1.P4Runtime/SetForwardingPipelineConfig")

        rng = random.Random(20261129)
        sent = {"Write": 0, "Read": 0, "SetForwardingPipelineConfig": 0}
        answers: dict[str, int] = {}
        for i in range(TOTAL):
            pick = rng.random()
            if pick < 0.75:
                sent["Write"] += 1
                seed = rng.choice(writes)
                data = mutate_fields(rng, seed).SerializeToString() if rng.random() < 0.75 else \
                    mutate_bytes(rng, seed.SerializeToString(), write_pool)
                request = _decode(p4runtime_pb2.WriteRequest, data)
                if request is None:
                    _undecodable(rpc_write, data, answers)
                else:
                    checker.write(request, f"request {i}", raw=data)
            elif pick < 0.95:
                sent["Read"] += 1
                seed = rng.choice(reads)
                data = mutate_fields(rng, seed).SerializeToString() if rng.random() < 0.5 else \
                    mutate_bytes(rng, seed.SerializeToString(), read_pool)
                read = _decode(p4runtime_pb2.ReadRequest, data)
                if read is None:
                    _undecodable(lambda d, timeout: list(rpc_read(d, timeout=timeout)), data, answers)
                else:
                    checker.read(read, f"request {i}", raw=data)
            else:
                sent["SetForwardingPipelineConfig"] += 1
                data = mutate_fields(rng, config).SerializeToString() if rng.random() < 0.5 else \
                    mutate_bytes(rng, config.SerializeToString(), [config.SerializeToString()])
                set_request = _decode(p4runtime_pb2.SetForwardingPipelineConfigRequest, data)
                if set_request is None:
                    _undecodable(rpc_set, data, answers)
                    continue
                set_request.action = config.VERIFY  # verified, never installed: the state stays the oracle's
                try:
                    rpc_set(set_request.SerializeToString(), timeout=10)
                    answers["set OK"] = answers.get("set OK", 0) + 1
                except grpc.RpcError as exc:
                    assert exc.code() != grpc.StatusCode.INTERNAL, exc.details()
                    answers[f"set {exc.code().name}"] = answers.get(f"set {exc.code().name}", 0) + 1
            if i % 500 == 0:
                checker.whole_state()
        checker.whole_state()
        tally = checker.tally
        print(f"sent {sent}, answers {answers} {tally.codes}, accepted updates {tally.accepted_updates}, "
              f"refused {tally.refused_updates}")
        assert not tally.disagreements, "\n\n".join(tally.disagreements[:8]) + f"\n({len(tally.disagreements)} in all)"
        assert sum(sent.values()) == TOTAL and min(sent.values()) > 0
        assert tally.refused_updates > 1000 and tally.accepted_updates > 100 and answers.get("undecodable", 0) > 100

        assert client.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=10).p4runtime_api_version
        route = ('table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\014\\000\\000\\000" '
                 'prefix_len: 8 } } action { action { action_id: 28749719 params { param_id: 1 value: "\\003" } } } }')
        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=entity(route))
        client.write_updates(update)  # whatever the fuzzing left under that key
        update.type = p4runtime_pb2.Update.INSERT
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
            data = mutate_fields(rng, seeds[kind]).SerializeToString() if rng.random() < 0.6 else \
                mutate_bytes(rng, pool[kind], pool)
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
