"""Malformed and invalid P4Runtime requests against the embedded server: the right canonical code (per update for
writes), no change to any state the request did not name, and a server that keeps answering."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from p4.v1 import p4runtime_pb2
from p4runtime_support import Client, code_name, entity, grpc_code_name, load_p4info, table_update

from p4switch.server import P4RuntimeServer, StateDevice

INSERT, MODIFY, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE

LPM_10 = ('table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\n\\000\\000\\000" prefix_len: 8 } } '
          'action { action { action_id: 28749719 params { param_id: 1 value: "\\003" } } } }')
PAIR = ('table_entry { table_id: 36030514 match { field_id: 1 exact { value: "\\001" } } '
        'match { field_id: 2 exact { value: "\\002" } } '
        'action { action { action_id: 26083406 params { param_id: 1 value: "\\007" } } } }')

BAD_UPDATES = {
    "unknown table id": (INSERT, LPM_10.replace("49652232", "33554431"), "INVALID_ARGUMENT"),
    "unknown action id": (INSERT, LPM_10.replace("28749719", "16777215"), "INVALID_ARGUMENT"),
    "unknown match field id": (INSERT, LPM_10.replace("field_id: 1", "field_id: 9"), "INVALID_ARGUMENT"),
    "unknown param id": (INSERT, LPM_10.replace("param_id: 1", "param_id: 4"), "INVALID_ARGUMENT"),
    "exact value too wide": (INSERT, PAIR.replace('value: "\\001"', 'value: "\\001\\000\\000\\000\\000"'),
                             "INVALID_ARGUMENT"),
    "9-bit param given 10 bits": (INSERT, LPM_10.replace('value: "\\003"', 'value: "\\002\\000"'),
                                  "INVALID_ARGUMENT"),
    "empty byte string": (INSERT, PAIR.replace('value: "\\002"', 'value: ""'), "INVALID_ARGUMENT"),
    "missing exact field": (INSERT, PAIR.replace('match { field_id: 2 exact { value: "\\002" } } ', ""),
                            "INVALID_ARGUMENT"),
    "priority on an lpm table": (INSERT, LPM_10[:-2] + " priority: 3 }", "INVALID_ARGUMENT"),
    "duplicate insert": (INSERT, PAIR, "ALREADY_EXISTS"),
    "delete of a missing entry": (DELETE, LPM_10.replace("\\n", "\\013"), "NOT_FOUND"),
    "modify of a missing entry": (MODIFY, LPM_10.replace("\\n", "\\013"), "NOT_FOUND"),
    "multicast group 0": (INSERT, "packet_replication_engine_entry { multicast_group_entry { "
                                  "replicas { egress_port: 1 instance: 1 } } }", "INVALID_ARGUMENT"),
    "duplicate replica": (INSERT, "packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 3 "
                                  "replicas { egress_port: 1 instance: 1 } replicas { port: \"\\001\" instance: 1 } } }",
                          "INVALID_ARGUMENT"),
    "delete of a missing clone session": (DELETE, "packet_replication_engine_entry { clone_session_entry { "
                                                  "session_id: 9 } }", "NOT_FOUND"),
    "unknown register": (MODIFY, 'register_entry { register_id: 369098752 data { bitstring: "\\001" } }',
                         "INVALID_ARGUMENT"),
}


def snapshot(client: Client) -> list[str]:
    out = []
    for req in ("table_entry { }", "packet_replication_engine_entry { multicast_group_entry { } }",
                "packet_replication_engine_entry { clone_session_entry { } }"):
        out += [str(e) for e in client.read(entity(req))]
    for table_id in (49652232, 46574233, 36030514):
        out += [str(e) for e in client.read(entity(f"table_entry {{ table_id: {table_id} is_default_action: true }}"))]
    return out


@pytest.fixture()
def client() -> Iterator[Client]:
    srv = P4RuntimeServer(StateDevice(), address="127.0.0.1:0").start()
    c = Client(f"127.0.0.1:{srv.port}", election_id=1)
    assert code_name(c.arbitrate().arbitration.status.code) == "OK"
    yield c
    c.close()
    srv.stop()


@pytest.fixture()
def ready(client: Client) -> Client:
    client.set_pipeline(load_p4info("runtime_tables"))
    assert client.write_updates(table_update(INSERT, PAIR),
                                table_update(INSERT, "packet_replication_engine_entry { multicast_group_entry { "
                                                     "multicast_group_id: 1 replicas { egress_port: 2 instance: 1 } } }"),
                                ) == ("OK", [])
    return client


@pytest.mark.parametrize("case", sorted(BAD_UPDATES))
def test_a_bad_update_gets_its_code_and_changes_nothing(ready: Client, case: str) -> None:
    kind, text, expected = BAD_UPDATES[case]
    before = snapshot(ready)
    assert ready.write_updates(table_update(kind, text)) == ("UNKNOWN", [expected])
    assert snapshot(ready) == before
    assert ready.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version


def test_a_batch_applies_the_good_updates_and_reports_each(ready: Client) -> None:
    bad_kind, bad_text, _ = BAD_UPDATES["unknown table id"]
    code, per_update = ready.write_updates(table_update(bad_kind, bad_text), table_update(INSERT, LPM_10),
                                           table_update(INSERT, PAIR))
    assert (code, per_update) == ("UNKNOWN", ["INVALID_ARGUMENT", "OK", "ALREADY_EXISTS"])
    entries = ready.read(entity("table_entry { table_id: 49652232 }"))
    assert [e.table_entry.action.action.params[0].value for e in entries] == [b"\x03"]


def test_writes_and_reads_before_a_pipeline_are_failed_precondition(client: Client) -> None:
    assert client.write_updates(table_update(INSERT, LPM_10)) == ("FAILED_PRECONDITION", [])
    with pytest.raises(grpc.RpcError) as exc:
        client.read(entity("table_entry { }"))
    assert grpc_code_name(exc.value) == "FAILED_PRECONDITION"


def test_request_level_errors(ready: Client) -> None:
    wrong_device = p4runtime_pb2.WriteRequest(device_id=5, updates=[table_update(INSERT, LPM_10)])
    wrong_device.election_id.low = 1
    assert ready.write(wrong_device) == ("NOT_FOUND", [])
    rollback = p4runtime_pb2.WriteRequest(device_id=0, updates=[table_update(INSERT, LPM_10)],
                                          atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR)
    rollback.election_id.low = 1
    assert ready.write(rollback) == ("UNIMPLEMENTED", [])
    for text, expected in (("table_entry { table_id: 33554431 }", "INVALID_ARGUMENT"),
                           ("counter_entry { counter_id: 302000000 }", "INVALID_ARGUMENT"),
                           ("packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 42 } }",
                            "NOT_FOUND")):
        with pytest.raises(grpc.RpcError) as exc:
            ready.read(entity(text))
        assert grpc_code_name(exc.value) == expected, text
    assert len(ready.read(entity("table_entry { }"))) == 1


@pytest.mark.parametrize("bad", ["no p4info", "device config not JSON", "device config of another format",
                                 "const entry for a missing field"])
def test_a_bad_pipeline_config_is_refused_and_the_old_one_keeps_running(ready: Client, bad: str) -> None:
    p4info = load_p4info("runtime_tables")
    device_config = b""
    if bad == "no p4info":
        p4info.Clear()
    elif bad == "device config not JSON":
        device_config = b"\x00\xffnot json"
    elif bad == "device config of another format":
        device_config = b'{"format": "bmv2-json/1"}'
    else:
        device_config = b'{"tables": {"I.pairs": {"const_entries": [{"match": [{"value": 1}], "action_id": 1}]}}}'
    before = snapshot(ready)
    with pytest.raises(grpc.RpcError) as exc:
        ready.set_pipeline(p4info, device_config)
    assert grpc_code_name(exc.value) == "INVALID_ARGUMENT"
    assert snapshot(ready) == before
    assert ready.write_updates(table_update(INSERT, LPM_10)) == ("OK", [])
