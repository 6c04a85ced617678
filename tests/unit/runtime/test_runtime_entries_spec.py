"""The requests the P4Runtime fuzzer's spec oracle found the server accepting or answering wrongly (issue 19): each
expected code is the P4Runtime specification's (sections named in each test)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.runtime.entries import EntityCodec
from p4switch.runtime.state import RuntimeState, RuntimeStateError

INSERT, MODIFY, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE
P4INFO = Path(__file__).resolve().parents[2] / "conformance" / "p4info" / "runtime_tables.p4info.txtpb"
LPM = ('table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\n\\000\\000\\000" prefix_len: 8 } } '
       'action { action { action_id: 28749719 params { param_id: 1 value: "\\003" } } } %s }')
ACL = ('table_entry { table_id: 46574233 match { field_id: 1 ternary { value: "\\006" mask: "\\377" } } '
       'action { action { action_id: 33522068 params { param_id: 1 value: "\\001" } } } priority: %d %s }')


@pytest.fixture
def codec() -> EntityCodec:
    p4info = text_format.Parse(P4INFO.read_text(), p4info_pb2.P4Info())
    return EntityCodec(RuntimeState.from_p4info(p4info))


def entity(text: str) -> p4runtime_pb2.Entity:
    return text_format.Parse(text, p4runtime_pb2.Entity())


def refused(codec: EntityCodec, kind: int, text: str) -> int:
    with pytest.raises(RuntimeStateError) as info:
        codec.write(kind, entity(text))
    return info.value.code


def test_is_const_in_a_write_is_invalid(codec: EntityCodec) -> None:
    """TableEntry: "is_const must be false in any INSERT, MODIFY, or DELETE ... INVALID_ARGUMENT"."""
    assert refused(codec, INSERT, LPM % "is_const: true") == code_pb2.INVALID_ARGUMENT
    codec.write(INSERT, entity(LPM % ""))
    assert refused(codec, DELETE, LPM % "is_const: true") == code_pb2.INVALID_ARGUMENT
    assert len(codec.read(entity("table_entry { table_id: 49652232 }"))) == 1


def test_direct_resources_on_a_table_without_them_are_invalid(codec: EntityCodec) -> None:
    """Direct Resources: a direct resource configuration for a table/action without one is INVALID_ARGUMENT;
    meter_counter_data included, and on the default entry even without an action."""
    assert refused(codec, INSERT, LPM % "meter_counter_data { }") == code_pb2.INVALID_ARGUMENT
    for extra in ("meter_counter_data { }", "meter_config { }", "counter_data { }"):
        default = f"table_entry {{ table_id: 49652232 is_default_action: true {extra} }}"
        assert refused(codec, MODIFY, default) == code_pb2.INVALID_ARGUMENT


def test_default_entry_has_no_idle_timeout(codec: EntityCodec) -> None:
    """Idle-timeout: with is_default_action set, idle_timeout_ns must be 0."""
    text = ("table_entry { table_id: 49652232 is_default_action: true idle_timeout_ns: 5 "
            "action { action { action_id: 32117294 } } }")
    assert refused(codec, MODIFY, text) == code_pb2.INVALID_ARGUMENT


def test_modify_without_an_action_keeps_the_entry(codec: EntityCodec) -> None:
    """Action Specification: the action "may be left unset for MODIFY updates"; the entry keeps its action and,
    with no direct resource given, the MODIFY is a no-op. A missing entry is still NOT_FOUND."""
    codec.write(INSERT, entity(LPM % 'metadata: "m"'))
    key = 'table_entry { table_id: 49652232 match { field_id: 1 lpm { value: "\\n\\000\\000\\000" prefix_len: 8 } } }'
    codec.write(MODIFY, entity(key))
    [read] = codec.read(entity("table_entry { table_id: 49652232 }"))
    assert read == entity(LPM % 'metadata: "m"')
    assert refused(codec, MODIFY, key.replace("\\n", "\\013")) == code_pb2.NOT_FOUND


def test_replica_instance_and_class_of_service_must_fit_v1model(codec: EntityCodec) -> None:
    """PRE: the instance "may not exceed the maximum allowed by the target for EgressInstance_t" (v1model's
    egress_rid is bit<16>), the class of service must be valid for the target (priority is bit<3>)."""
    group = ("packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 1 "
             "replicas { egress_port: 1 instance: %d } } }")
    assert refused(codec, INSERT, group % 65536) == code_pb2.INVALID_ARGUMENT
    codec.write(INSERT, entity(group % 65535))
    session = "packet_replication_engine_entry { clone_session_entry { session_id: 5 class_of_service: %d } }"
    assert refused(codec, INSERT, session % 8) == code_pb2.INVALID_ARGUMENT
    codec.write(INSERT, entity(session % 7))


def test_wildcard_reads_filter_on_priority_action_and_metadata(codec: EntityCodec) -> None:
    """Wildcard Reads: priority, action id, controller_metadata and metadata select entries when non-default."""
    codec.write(INSERT, entity(ACL % (10, 'metadata: "a"')))
    codec.write(INSERT, entity(ACL.replace("\\006", "\\007") % (20, "controller_metadata: 3")))

    def count(text: str) -> int:
        return len(codec.read(entity(f"table_entry {{ table_id: 46574233 {text} }}")))

    assert count("") == 2
    assert count("priority: 10") == 1 and count("priority: 30") == 0
    assert count('metadata: "a"') == 1 and count("controller_metadata: 3") == 1
    assert count("action { action { action_id: 33522068 } }") == 2
    assert count("action { action { action_id: 21257015 } }") == 0
    assert len(codec.read(entity("table_entry { priority: 20 }"))) == 1  # over every table
