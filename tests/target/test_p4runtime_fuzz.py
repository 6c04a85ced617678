"""Mutated P4Runtime requests (seeded byte flips, truncations, splices of the recorded transcript's requests) sent
as raw bytes: the server answers every one with a sensible code, never an internal error of its own, keeps
serving, and everything left in its state still passes validation."""

from __future__ import annotations

import json
import random

import grpc
from google.protobuf import text_format
from p4.v1 import p4runtime_pb2
from p4runtime_support import CONFORMANCE, Client, entity, load_p4info, update_codes

from p4switch.runtime.entries import EntityCodec
from p4switch.runtime.state import RuntimeState
from p4switch.server import P4RuntimeServer, StateDevice

ALLOWED = {"OK", "UNKNOWN", "INVALID_ARGUMENT", "NOT_FOUND", "PERMISSION_DENIED", "FAILED_PRECONDITION",
           "UNIMPLEMENTED"}


def seeds() -> list[bytes]:
    out = []
    for line in (CONFORMANCE / "p4runtime" / "runtime_tables.jsonl").read_text().splitlines():
        step = json.loads(line)
        if step["rpc"] == "Write":
            request = text_format.Parse(step["request"], p4runtime_pb2.WriteRequest())
            request.election_id.low = 1
            out.append(request.SerializeToString())
    return out


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        if op == 0 and buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            del buf[rng.randrange(len(buf)):]
        elif op == 2:
            other = rng.choice(pool)
            cut = rng.randrange(len(other) + 1)
            buf += other[cut:]
        elif buf:
            buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


def test_mutated_writes_get_sensible_answers_and_leave_a_valid_state() -> None:
    device = StateDevice()
    server = P4RuntimeServer(device, address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=1)
    try:
        client.arbitrate()
        client.set_pipeline(load_p4info("runtime_tables"))
        raw_write = client.channel.unary_unary("/p4.v1.P4Runtime/Write")
        rng = random.Random(4)
        pool = seeds()
        answered = {"OK": 0, "UNKNOWN": 0, "undecodable": 0}
        for _ in range(300):
            data = mutate(rng, rng.choice(pool), pool)
            try:
                raw_write(data, timeout=10)
                answered["OK"] += 1
            except grpc.RpcError as exc:
                code = exc.code().name
                if code == "INTERNAL":  # grpc itself could not decode the bytes as a WriteRequest
                    assert "deserializ" in (exc.details() or "").lower(), exc.details()
                    answered["undecodable"] += 1
                    continue
                assert code in ALLOWED, (code, exc.details())
                if code == "UNKNOWN":
                    per_update = update_codes(exc)
                    assert per_update and "INTERNAL" not in per_update, (per_update, exc.details())
                    answered["UNKNOWN"] += 1
        assert answered["OK"] and answered["UNKNOWN"]  # the fuzzing reached both valid and refused updates

        assert client.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version
        saved = client.read(entity("table_entry { }"),
                            entity("packet_replication_engine_entry { multicast_group_entry { } }"),
                            entity("packet_replication_engine_entry { clone_session_entry { } }"))
        fresh = EntityCodec(RuntimeState.from_p4info(load_p4info("runtime_tables")))
        for e in saved:  # whatever the fuzzing left behind is something a client could have written
            fresh.write(p4runtime_pb2.Update.INSERT, e)
    finally:
        client.close()
        server.stop()


def test_mutated_reads_and_pipeline_configs_never_break_the_server() -> None:
    device = StateDevice()
    server = P4RuntimeServer(device, address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=1)
    try:
        client.arbitrate()
        client.set_pipeline(load_p4info("runtime_tables"))
        raw_read = client.channel.unary_stream("/p4.v1.P4Runtime/Read")
        raw_set = client.channel.unary_unary("/p4.v1.P4Runtime/SetForwardingPipelineConfig")
        reads = []
        for line in (CONFORMANCE / "p4runtime" / "runtime_tables.jsonl").read_text().splitlines():
            step = json.loads(line)
            if step["rpc"] == "Read":
                reads.append(text_format.Parse(step["request"], p4runtime_pb2.ReadRequest()).SerializeToString())
        config = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY)
        config.election_id.low = 1
        config.config.p4info.CopyFrom(load_p4info("runtime_tables"))
        rng = random.Random(7)
        for i in range(150):
            if i % 2:
                data = mutate(rng, rng.choice(reads), reads)
                call = lambda d: list(raw_read(d, timeout=10))  # noqa: E731
            else:
                data = mutate(rng, config.SerializeToString(), [config.SerializeToString()])
                call = lambda d: raw_set(d, timeout=10)  # noqa: E731
            try:
                call(data)
            except grpc.RpcError as exc:
                code = exc.code().name
                if code == "INTERNAL":
                    assert "deserializ" in (exc.details() or "").lower(), exc.details()
                else:
                    assert code in ALLOWED, (code, exc.details())
        assert device.state is not None  # whatever was committed, a pipeline is installed and served
        client.read(entity("table_entry { }"))
        assert client.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version
    finally:
        client.close()
        server.stop()
