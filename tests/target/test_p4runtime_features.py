"""Embedded P4Runtime server features beyond the transcript: digests with acks, packet-in to the primary only,
pipeline actions (VERIFY, VERIFY_AND_SAVE + COMMIT, RECONCILE_AND_COMMIT keeping what still fits), Get response
types, register reads and writes (which BMv2 cannot do), the `p4ina.Admin` service and TLS."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from p4runtime_support import Client, code_name, entity, grpc_code_name, load_p4info, table_update

from p4switch.exceptions import SwitchStartError
from p4switch.server import P4RuntimeServer, StateDevice, TlsOptions
from p4switch.server.admin import call

INSERT, MODIFY = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY
Set = p4runtime_pb2.SetForwardingPipelineConfigRequest
Get = p4runtime_pb2.GetForwardingPipelineConfigRequest

P4INFO = """
tables {
  preamble { id: 33554433 name: "I.smac" alias: "smac" }
  match_fields { id: 1 name: "h.eth.src" bitwidth: 48 match_type: EXACT }
  action_refs { id: 16777217 }
  size: 16
  idle_timeout_behavior: NOTIFY_CONTROL
}
actions { preamble { id: 16777217 name: "NoAction" alias: "NoAction" } }
registers {
  preamble { id: 369098753 name: "I.r" alias: "r" }
  type_spec { bitstring { bit { bitwidth: 16 } } }
  size: 4
}
digests {
  preamble { id: 385875969 name: "learn_t" alias: "learn_t" }
  type_spec { struct { name: "learn_t" } }
}
controller_packet_metadata {
  preamble { id: 67146229 name: "packet_in" alias: "packet_in" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
type_info {
  structs {
    key: "learn_t"
    value {
      members { name: "mac" type_spec { bitstring { bit { bitwidth: 48 } } } }
      members { name: "port" type_spec { bitstring { bit { bitwidth: 9 } } } }
    }
  }
}
"""
SMAC = ('table_entry { table_id: 33554433 match { field_id: 1 exact { value: "\\002\\000\\000\\000\\000\\001" } } '
        'action { action { action_id: 16777217 } } }')


def p4info() -> p4info_pb2.P4Info:
    return text_format.Parse(P4INFO, p4info_pb2.P4Info())


@pytest.fixture()
def device() -> StateDevice:
    return StateDevice(cpu_port=255)


@pytest.fixture()
def server(device: StateDevice) -> Iterator[P4RuntimeServer]:
    srv = P4RuntimeServer(device, address="127.0.0.1:0").start()
    yield srv
    srv.stop()


@pytest.fixture()
def clients(server: P4RuntimeServer) -> Iterator[list[Client]]:
    made = [Client(f"127.0.0.1:{server.port}", election_id=10), Client(f"127.0.0.1:{server.port}", election_id=5)]
    assert code_name(made[0].arbitrate().arbitration.status.code) == "OK"
    assert code_name(made[1].arbitrate().arbitration.status.code) == "ALREADY_EXISTS"
    made[0].set_pipeline(p4info())
    yield made
    for c in made:
        c.close()


def test_digest_lists_flow_after_a_digest_entry_and_wait_for_acks(device: StateDevice, clients: list[Client]) -> None:
    primary, backup = clients
    assert device.state is not None
    digest = device.state.digests["learn_t"]
    digest.push((0x020000000001, 3))
    assert digest.dropped == 1  # no DigestEntry yet
    assert primary.write_updates(table_update(INSERT, "digest_entry { digest_id: 385875969 config { "
                                                      "max_timeout_ns: 0 max_list_size: 1 ack_timeout_ns: 60000000000 } }")) \
        == ("OK", [])
    digest.push((0x020000000001, 3))
    got = primary.next("digest").digest
    assert got.digest_id == 385875969
    assert [[m.bitstring for m in d.struct.members] for d in got.data] == [[b"\x02\x00\x00\x00\x00\x01", b"\x03"]]
    digest.push((0x020000000001, 3))  # not acked yet: suppressed
    digest.push((0x020000000002, 4))
    second = primary.next("digest").digest
    assert second.data[0].struct.members[1].bitstring == b"\x04"
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = got.digest_id, got.list_id
    primary.send(ack)
    bad_ack = p4runtime_pb2.StreamMessageRequest()
    bad_ack.digest_ack.digest_id = 99
    primary.send(bad_ack)
    assert code_name(primary.next("error").error.canonical_code) == "INVALID_ARGUMENT"
    digest.push((0x020000000001, 3))  # acked now: reported again
    assert primary.next("digest").digest.list_id > second.list_id
    assert backup.inbox["digest"].empty()


def test_packet_in_goes_to_the_primary_only(device: StateDevice, clients: list[Client]) -> None:
    primary, backup = clients
    for port, payload in ((1, b""), (2, b"payload")):
        device.emit_packet_in((port << 7).to_bytes(2, "big") + payload)  # ingress_port:9, _pad:7
    first, second = primary.next("packet").packet, primary.next("packet").packet
    assert [m.value for m in first.metadata] == [b"\x01", b"\x00"] and first.payload == b""
    assert [m.value for m in second.metadata] == [b"\x02", b"\x00"] and second.payload == b"payload"
    assert backup.inbox["packet"].empty()
    out = p4runtime_pb2.StreamMessageRequest()
    out.packet.payload = b"x"
    backup.send(out)  # a backup may not send packets
    assert code_name(backup.next("error").error.canonical_code) == "PERMISSION_DENIED"
    assert device.packets_out == []


def test_registers_are_readable_and_writable_over_p4runtime(clients: list[Client]) -> None:
    primary, _ = clients
    write = 'register_entry { register_id: 369098753 index { index: 2 } data { bitstring: "\\001\\002" } }'
    assert primary.write_updates(table_update(MODIFY, write)) == ("OK", [])
    cells = primary.read(entity("register_entry { register_id: 369098753 }"))
    assert [c.register_entry.data.bitstring for c in cells] == [b"\x00", b"\x00", b"\x01\x02", b"\x00"]
    [one] = primary.read(entity("register_entry { register_id: 369098753 index { index: 2 } }"))
    assert one.register_entry.index.index == 2


def test_pipeline_actions(device: StateDevice, clients: list[Client]) -> None:
    primary, _ = clients
    assert primary.write_updates(table_update(INSERT, SMAC)) == ("OK", [])
    assert primary.write_updates(table_update(MODIFY, 'register_entry { register_id: 369098753 index { index: 1 } '
                                                      'data { bitstring: "\\007" } }')) == ("OK", [])
    state = device.state
    primary.set_pipeline(load_p4info("runtime_tables"), action=Set.VERIFY)
    assert device.state is state  # VERIFY changes nothing
    primary.set_pipeline(p4info(), action=Set.RECONCILE_AND_COMMIT)
    assert device.state is not state
    assert len(primary.read(entity("table_entry { }"))) == 1
    assert device.state is not None and device.state.registers["I.r"].cells[1] == 7

    smaller = p4info()
    del smaller.tables[:]
    primary.set_pipeline(smaller, action=Set.RECONCILE_AND_COMMIT)  # the table is gone, the register stays
    assert primary.read(entity("table_entry { }")) == []
    assert device.state.registers["I.r"].cells[1] == 7

    with pytest.raises(grpc.RpcError) as exc:
        primary.set_pipeline(p4info(), action=Set.COMMIT)
    assert grpc_code_name(exc.value) == "FAILED_PRECONDITION"
    primary.set_pipeline(load_p4info("runtime_tables"), action=Set.VERIFY_AND_SAVE)
    assert len(device.state.tables) == 0
    primary.set_pipeline(p4info(), action=Set.COMMIT)  # commits the saved config, not this request's
    assert [t.name for t in device.state.tables] == ["I.ipv4_lpm", "I.acl", "I.pairs"]
    assert device.state.registers.get("I.r") is None

    primary.set_pipeline(p4info())  # VERIFY_AND_COMMIT starts from scratch
    assert device.state.registers["I.r"].cells == [0, 0, 0, 0]


def test_get_forwarding_pipeline_config_response_types(server: P4RuntimeServer) -> None:
    from p4runtime_support import CONFORMANCE

    from p4switch.compiler import compile_file

    program = compile_file(CONFORMANCE / "programs" / "runtime_tables.p4")  # the switch compiles what it gets
    config = program.device_config_bytes()
    client = Client(f"127.0.0.1:{server.port}", election_id=1)
    try:
        client.arbitrate()
        with pytest.raises(grpc.RpcError) as exc:
            client.stub.GetForwardingPipelineConfig(Get(device_id=0))
        assert grpc_code_name(exc.value) == "FAILED_PRECONDITION"
        req = Set(device_id=0, action=Set.VERIFY_AND_COMMIT)
        req.election_id.low = 1
        req.config.p4info.CopyFrom(program.p4info)
        req.config.p4_device_config = config
        req.config.cookie.cookie = 42
        client.stub.SetForwardingPipelineConfig(req)
        full = client.stub.GetForwardingPipelineConfig(Get(device_id=0, response_type=Get.ALL)).config
        assert full.p4info == program.p4info and full.p4_device_config == config and full.cookie.cookie == 42
        cookie = client.stub.GetForwardingPipelineConfig(Get(device_id=0, response_type=Get.COOKIE_ONLY)).config
        assert not cookie.HasField("p4info") and cookie.p4_device_config == b"" and cookie.cookie.cookie == 42
        info = client.stub.GetForwardingPipelineConfig(Get(device_id=0, response_type=Get.P4INFO_AND_COOKIE)).config
        assert info.p4info == program.p4info and info.p4_device_config == b""
        dev = client.stub.GetForwardingPipelineConfig(Get(device_id=0, response_type=Get.DEVICE_CONFIG_AND_COOKIE))
        assert not dev.config.HasField("p4info") and dev.config.p4_device_config == config
    finally:
        client.close()


def test_admin_service(server: P4RuntimeServer, clients: list[Client]) -> None:
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        call(channel, "write_register", {"register": "I.r", "index": 3, "value": 513})
        assert call(channel, "read_register", {"register": "I.r", "index": 3}) == {"cells": [513]}
        assert call(channel, "read_register", {"register": 369098753}) == {"cells": [0, 0, 0, 513]}
        stats = call(channel, "stats")
        assert stats["server"]["streams"] == 2 and stats["server"]["primary_election_id"] == 10
        for method, args, expected in (
            ("read_register", {"register": "I.nope"}, grpc.StatusCode.INVALID_ARGUMENT),
            ("write_register", {"register": "I.r", "value": 1 << 16}, grpc.StatusCode.INVALID_ARGUMENT),
            ("set_queue_rate", {"port": 1, "rate_pps": 100}, grpc.StatusCode.UNIMPLEMENTED),  # no data plane
            ("set_queue_depth", {"port": "one", "depth": 1}, grpc.StatusCode.INVALID_ARGUMENT),
        ):
            with pytest.raises(grpc.RpcError) as exc:
                call(channel, method, args)
            assert exc.value.code() == expected, method
        raw = channel.unary_unary("/p4ina.Admin/stats")
        with pytest.raises(grpc.RpcError) as bad_json:
            raw(b"{not json")
        assert bad_json.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        channel.close()


def test_admin_queue_operations_reach_the_switch_engine() -> None:
    from p4switch.switch import core
    switch = core.Switch()
    server = P4RuntimeServer(switch, address="127.0.0.1:0").start()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        call(channel, "set_queue_rate", {"port": 1, "rate_pps": 250})
        call(channel, "set_queue_depth", {"port": 1, "depth": 7})
        queues = call(channel, "stats")["device"]["queues"]
        assert any(q["port"] == 1 and q["capacity"] == 7 and q["rate_pps"] == 250 for q in queues), queues
    finally:
        channel.close()
        server.stop()
        switch.stop()


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_tls_with_client_certificates(tmp_path: Path, device: StateDevice) -> None:
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "1",
             "-subj", "/CN=p4ina test CA", cwd=tmp_path)
    (tmp_path / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "client"):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={name}", cwd=tmp_path)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.crt", "-days", "1", "-extfile", "san.cnf", cwd=tmp_path)
    tls = TlsOptions(tmp_path / "server.crt", tmp_path / "server.key", tmp_path / "ca.crt")
    server = P4RuntimeServer(device, address="127.0.0.1:0", tls=tls).start()
    try:
        ca = (tmp_path / "ca.crt").read_bytes()
        good = grpc.ssl_channel_credentials(ca, (tmp_path / "client.key").read_bytes(),
                                            (tmp_path / "client.crt").read_bytes())
        with grpc.secure_channel(f"127.0.0.1:{server.port}", good) as channel:
            reply = p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(p4runtime_pb2.CapabilitiesRequest(),
                                                                           timeout=10)
            assert reply.p4runtime_api_version
        with grpc.secure_channel(f"127.0.0.1:{server.port}", grpc.ssl_channel_credentials(ca)) as channel:
            with pytest.raises(grpc.RpcError) as exc:
                p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=10)
            assert exc.value.code() == grpc.StatusCode.UNAVAILABLE  # no client certificate: handshake refused
    finally:
        server.stop()


def test_a_busy_or_bad_address_is_a_one_line_start_error(server: P4RuntimeServer) -> None:
    with pytest.raises(SwitchStartError, match="address in use"):
        P4RuntimeServer(StateDevice(), address=f"127.0.0.1:{server.port}").start()
    with pytest.raises(SwitchStartError, match="expected HOST:PORT"):
        P4RuntimeServer(StateDevice(), address="127.0.0.1").start()


def test_a_switch_started_with_a_pipeline_serves_it_at_once() -> None:
    """`p4ina switch prog.json --grpc-server-addr ...`: clients can fetch the P4Info and write without a push."""
    from p4runtime_support import CONFORMANCE

    from p4switch import compiler
    from p4switch.switch import core

    program = compiler.compile_file(CONFORMANCE / "programs" / "runtime_tables.p4")
    switch = core.Switch()
    switch.install_pipeline(program.p4info, program.device_config_bytes())
    server = P4RuntimeServer(switch, address="127.0.0.1:0").start()
    client = Client(f"127.0.0.1:{server.port}", election_id=1)
    try:
        client.arbitrate()
        got = client.stub.GetForwardingPipelineConfig(Get(device_id=0, response_type=Get.P4INFO_AND_COOKIE))
        assert got.config.p4info == program.p4info
        lpm = ('table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\n\\000\\000\\000" prefix_len: 8 '
               '} } action { action { action_id: 28749719 params { param_id: 1 value: "\\003" } } } }')
        assert client.write_updates(table_update(INSERT, lpm)) == ("OK", [])
        assert switch.state.tables["I.ipv4_lpm"].lookup((0x0A000001,))[:3] == (True, 28749719, (3,))
    finally:
        client.close()
        server.stop()
        switch.stop()


def test_idle_entries_are_reported_to_the_primary(device: StateDevice, clients: list[Client]) -> None:
    primary, backup = clients
    aging = SMAC[:-2] + " idle_timeout_ns: 50000000 }"  # 50 ms
    assert primary.write_updates(table_update(INSERT, aging)) == ("OK", [])
    note = primary.next("idle_timeout_notification").idle_timeout_notification
    assert [e.idle_timeout_ns for e in note.table_entry] == [50_000_000]
    assert note.table_entry[0].match[0].exact.value == b"\x02\x00\x00\x00\x00\x01"
    [read] = primary.read(entity("table_entry { table_id: 33554433 time_since_last_hit { } }"))
    assert read.table_entry.time_since_last_hit.elapsed_ns >= 50_000_000
    assert backup.inbox["idle_timeout_notification"].empty()
