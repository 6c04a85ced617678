"""Replay the P4Runtime session recorded from real simple_switch_grpc (tests/conformance/p4runtime/) against the
embedded server: the same status codes, the same per-update codes and the same read responses, step by step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from p4runtime_support import CONFORMANCE, Client, code_name, grpc_code_name, load_p4info

from p4switch.server import P4RuntimeServer, StateDevice

TRANSCRIPT = CONFORMANCE / "p4runtime" / "runtime_tables.jsonl"


def _steps() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TRANSCRIPT.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def compiled() -> tuple[p4info_pb2.P4Info, bytes]:
    from p4switch import compiler
    program = compiler.compile_file(CONFORMANCE / "programs" / "runtime_tables.p4")
    return program.p4info, program.device_config_bytes()


@pytest.fixture(params=["state-device", "switch"])
def target(request: pytest.FixtureRequest) -> Iterator[tuple[P4RuntimeServer, p4info_pb2.P4Info, bytes]]:
    """The control-plane-only device with p4c's P4Info, and the real switch engine with the compiled program."""
    if request.param == "switch":
        from p4switch.switch import core
        p4info, device_config = request.getfixturevalue("compiled")
        device: Any = core.Switch()
    else:
        p4info, device_config, device = load_p4info("runtime_tables"), b"", StateDevice()
    srv = P4RuntimeServer(device, address="127.0.0.1:0").start()
    yield srv, p4info, device_config
    srv.stop()
    if request.param == "switch":
        device.stop()


def test_transcript_replays_with_the_same_answers(target: tuple[P4RuntimeServer, p4info_pb2.P4Info, bytes]) -> None:
    server, p4info, device_config = target
    address = f"127.0.0.1:{server.port}"
    clients: list[Client] = []
    try:
        for n, step in enumerate(_steps()):
            where = f"step {n}: {step['step']}"
            rpc = step["rpc"]
            if rpc == "StreamChannel":
                election = 10 if not clients else 5
                client = Client(address, election_id=election)
                clients.append(client)
                reply = client.arbitrate()
                assert reply is not None, where
                assert code_name(reply.arbitration.status.code) == step["code"], where
            elif rpc == "SetForwardingPipelineConfig":
                clients[0].set_pipeline(p4info, device_config)
                assert step["code"] == "OK", where
            elif rpc == "Write":
                request = text_format.Parse(step["request"], p4runtime_pb2.WriteRequest())
                code, per_update = clients[0].write(request)
                assert (code, per_update) == (step["code"], step["update_codes"]), where
            elif rpc == "Read":
                request = text_format.Parse(step["request"], p4runtime_pb2.ReadRequest())
                try:
                    got_entities = [e for r in clients[0].stub.Read(request) for e in r.entities]
                    code = "OK"
                except grpc.RpcError as exc:
                    got_entities, code = [], grpc_code_name(exc)
                assert code == step["code"], where
                expected = [text_format.Parse(t, p4runtime_pb2.Entity()) for t in step["response"]]
                assert got_entities == expected, where
            else:
                pytest.fail(f"{where}: unknown rpc {rpc}")
    finally:
        for client in clients:
            client.close()
