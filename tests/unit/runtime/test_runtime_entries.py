"""P4Runtime entity validation and translation (`p4switch.runtime.entries`): the codes simple_switch_grpc gives,
canonical reads, direct resources, PRE, registers, counters, meters, digests, value sets, the entries loader."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.runtime.entries import (
    EntityCodec,
    EntriesFileError,
    decode_bytes,
    encode_bytes,
    load_write_request,
)
from p4switch.runtime.state import RuntimeState, RuntimeStateError

INSERT, MODIFY, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE
CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"

P4INFO = """
tables {
  preamble { id: 33554433 name: "I.t" alias: "t" }
  match_fields { id: 1 name: "k_exact" bitwidth: 12 match_type: EXACT }
  match_fields { id: 2 name: "k_range" bitwidth: 16 match_type: RANGE }
  match_fields { id: 3 name: "k_opt" bitwidth: 8 match_type: OPTIONAL }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 scope: DEFAULT_ONLY }
  initial_default_action { action_id: 16777218 }
  direct_resource_ids: 318767105
  direct_resource_ids: 352321537
  size: 16
}
tables {
  preamble { id: 33554434 name: "I.c" alias: "c" }
  match_fields { id: 1 name: "k" bitwidth: 8 match_type: EXACT }
  action_refs { id: 16777217 }
  const_default_action_id: 16777217
  initial_default_action { action_id: 16777217 arguments { param_id: 1 value: "\\005" } }
  is_const_table: true
  size: 4
}
actions { preamble { id: 16777217 name: "I.set" alias: "set" } params { id: 1 name: "v" bitwidth: 4 } }
actions { preamble { id: 16777218 name: "I.miss" alias: "miss" } }
direct_counters { preamble { id: 318767105 name: "I.t_counter" } spec { unit: BOTH } direct_table_id: 33554433 }
direct_meters { preamble { id: 352321537 name: "I.t_meter" } spec { unit: BYTES } direct_table_id: 33554433 }
counters { preamble { id: 302000001 name: "I.cnt" } spec { unit: PACKETS } size: 4 }
meters { preamble { id: 335544321 name: "I.m" } spec { unit: PACKETS } size: 2 }
registers {
  preamble { id: 369098753 name: "I.r" }
  type_spec { bitstring { bit { bitwidth: 12 } } }
  size: 3
}
digests {
  preamble { id: 385875969 name: "learn_t" }
  type_spec { struct { name: "learn_t" } }
}
value_sets {
  preamble { id: 50331649 name: "P.vs" }
  match { id: 1 name: "etype" bitwidth: 16 match_type: TERNARY }
  size: 2
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


@pytest.fixture()
def codec() -> EntityCodec:
    return EntityCodec(RuntimeState.from_p4info(text_format.Parse(P4INFO, p4info_pb2.P4Info())))


def ent(text: str) -> p4runtime_pb2.Entity:
    return text_format.Parse(text, p4runtime_pb2.Entity())


def code_of(codec: EntityCodec, kind: int, text: str) -> str:
    try:
        codec.write(kind, ent(text))
        return "OK"
    except RuntimeStateError as exc:
        return str(code_pb2.Code.Name(exc.code))


T_ENTRY = ('table_entry {{ table_id: 33554433 match {{ field_id: 1 exact {{ value: "{k}" }} }} {extra} '
           'action {{ action {{ action_id: {action} params {{ param_id: 1 value: "{v}" }} }} }} priority: {prio} }}')


def t_entry(k: str = "\\001", v: str = "\\002", prio: int = 1, extra: str = "", action: int = 16777217) -> str:
    return T_ENTRY.format(k=k, v=v, prio=prio, extra=extra, action=action)


def test_byte_strings() -> None:
    assert decode_bytes(b"\x00\x00\x01\xff", 9, "x") == 511
    assert encode_bytes(0) == b"\x00" and encode_bytes(511) == b"\x01\xff"
    for bad in (b"", b"\x02\x00"):
        with pytest.raises(RuntimeStateError):
            decode_bytes(bad, 9, "x")


@pytest.mark.parametrize(("text", "expected"), [
    (t_entry(), "OK"),
    (t_entry(prio=0), "INVALID_ARGUMENT"),  # range/optional tables need a priority
    (t_entry(k="\\020\\000"), "INVALID_ARGUMENT"),  # 13 bits for a 12-bit key
    (t_entry(v="\\020"), "INVALID_ARGUMENT"),  # 5 bits for a 4-bit param
    (t_entry(action=16777218), "INVALID_ARGUMENT"),  # default-only action in an entry
    (t_entry(extra='match { field_id: 2 range { low: "\\000" high: "\\377\\377" } }'), "INVALID_ARGUMENT"),
    (t_entry(extra='match { field_id: 2 range { low: "\\011" high: "\\010" } }'), "INVALID_ARGUMENT"),
    (t_entry(extra='match { field_id: 2 exact { value: "\\011" } }'), "INVALID_ARGUMENT"),
    (t_entry(extra='match { field_id: 3 optional { value: "\\011" } }'), "OK"),
    (t_entry().replace("33554433", "33554434").replace(" priority: 1", ""), "PERMISSION_DENIED"),
    ("table_entry { table_id: 16777217 }", "INVALID_ARGUMENT"),
    ("action_profile_member { action_profile_id: 1 }", "INVALID_ARGUMENT"),  # no such profile (PI: invalid id)
    (t_entry(extra="idle_timeout_ns: 1000"), "INVALID_ARGUMENT"),  # the table has no idle timeout support
])
def test_table_entry_validation(codec: EntityCodec, text: str, expected: str) -> None:
    assert code_of(codec, INSERT, text) == expected


def test_default_entries(codec: EntityCodec) -> None:
    default = 'table_entry { table_id: 33554433 is_default_action: true action { action { action_id: 16777218 } } }'
    assert code_of(codec, INSERT, default) == "INVALID_ARGUMENT"
    assert code_of(codec, MODIFY, default) == "OK"
    with_counter = default.replace(" } } }", " } } counter_data { packet_count: 1 } }")
    assert code_of(codec, MODIFY, with_counter) == "INVALID_ARGUMENT"  # BMv2 counts hits only
    assert code_of(codec, MODIFY, "direct_counter_entry { table_entry { table_id: 33554433 "
                                  "is_default_action: true } data { packet_count: 1 } }") == "UNIMPLEMENTED"  # as PI
    const = ('table_entry { table_id: 33554434 is_default_action: true '
             'action { action { action_id: 16777217 params { param_id: 1 value: "\\006" } } } }')
    assert code_of(codec, MODIFY, const) == "PERMISSION_DENIED"
    assert code_of(codec, MODIFY, const.replace("\\006", "\\005")) == "OK"  # the same action is no change
    [read] = codec.read(ent("table_entry { table_id: 33554434 is_default_action: true }"))
    assert read.table_entry.action.action.params[0].value == b"\x05"
    assert codec.state.tables["I.c"].lookup((1,))[:3] == (False, 16777217, (5,))


def test_entry_metadata_reads_back(codec: EntityCodec) -> None:
    codec.write(INSERT, ent(t_entry(extra='metadata: "cookie" controller_metadata: 77')))
    [read] = codec.read(ent("table_entry { table_id: 33554433 }"))
    assert (read.table_entry.metadata, read.table_entry.controller_metadata) == (b"cookie", 77)
    codec.write(MODIFY, ent(t_entry(extra='metadata: "other"')))
    [read] = codec.read(ent("table_entry { table_id: 33554433 }"))
    assert (read.table_entry.metadata, read.table_entry.controller_metadata) == (b"other", 0)


def test_reads_are_canonical_with_direct_resources(codec: EntityCodec) -> None:
    padded = t_entry(k="\\000\\001", extra='match { field_id: 2 range { low: "\\000\\005" high: "\\000\\011" } }')
    codec.write(INSERT, ent(padded))
    meter = ('direct_meter_entry { table_entry { ' + padded[len("table_entry { "):-2] + ' } '
             'config { cir: 100 cburst: 10 pir: 200 pburst: 20 } }')
    counter = ('direct_counter_entry { table_entry { ' + padded[len("table_entry { "):-2] + ' } '
               'data { packet_count: 3 byte_count: 300 } }')
    codec.write(MODIFY, ent(meter))
    codec.write(MODIFY, ent(counter))
    [read] = codec.read(ent("table_entry { table_id: 33554433 counter_data { } meter_config { } }"))
    te = read.table_entry
    assert te.match[0].exact.value == b"\x01"
    assert (te.match[1].range.low, te.match[1].range.high) == (b"\x05", b"\x09")
    assert (te.counter_data.packet_count, te.counter_data.byte_count) == (3, 300)
    assert (te.meter_config.cir, te.meter_config.pburst) == (100, 20)
    [dc] = codec.read(ent("direct_counter_entry { table_entry { table_id: 33554433 } }"))
    assert dc.direct_counter_entry.data.packet_count == 3
    codec.write(DELETE, ent(padded))
    assert codec.read(ent("table_entry { table_id: 33554433 }")) == []


def test_registers_counters_meters(codec: EntityCodec) -> None:
    assert code_of(codec, MODIFY, 'register_entry { register_id: 369098753 index { index: 1 } '
                                  'data { bitstring: "\\017\\377" } }') == "OK"
    assert code_of(codec, MODIFY, 'register_entry { register_id: 369098753 index { index: 1 } '
                                  'data { bitstring: "\\020\\000" } }') == "INVALID_ARGUMENT"
    assert code_of(codec, MODIFY, 'register_entry { register_id: 369098753 index { index: 3 } '
                                  'data { bitstring: "\\001" } }') == "OUT_OF_RANGE"
    assert code_of(codec, INSERT, 'register_entry { register_id: 369098753 index { index: 0 } '
                                  'data { bitstring: "\\001" } }') == "INVALID_ARGUMENT"
    regs = codec.read(ent("register_entry { register_id: 369098753 }"))
    assert [r.register_entry.data.bitstring for r in regs] == [b"\x00", b"\x0f\xff", b"\x00"]
    assert codec.state.registers["I.r"].cells == [0, 4095, 0]

    codec.state.counters["I.cnt"].count(2, 100)
    [c] = codec.read(ent("counter_entry { counter_id: 302000001 index { index: 2 } }"))
    assert c.counter_entry.data.packet_count == 1 and c.counter_entry.data.byte_count == 0  # PACKETS unit
    assert code_of(codec, INSERT, "counter_entry { counter_id: 302000001 index { index: 2 } }") == "INVALID_ARGUMENT"
    codec.write(MODIFY, ent("counter_entry { counter_id: 302000001 index { index: 2 } data { packet_count: 9 } }"))
    assert codec.state.counters["I.cnt"].packets[2] == 9

    codec.write(MODIFY, ent("meter_entry { meter_id: 335544321 index { index: 1 } "
                            "config { cir: 1 cburst: 1 pir: 2 pburst: 2 } }"))
    meters = codec.read(ent("meter_entry { meter_id: 335544321 }"))
    assert [m.meter_entry.HasField("config") for m in meters] == [False, True]
    assert code_of(codec, MODIFY, "meter_entry { meter_id: 335544321 index { index: 0 } "
                                  "config { cir: 5 cburst: 1 pir: 2 pburst: 2 } }") == "INVALID_ARGUMENT"


def test_pre_entries_read_back_in_the_form_they_were_written(codec: EntityCodec) -> None:
    codec.write(INSERT, ent('packet_replication_engine_entry { clone_session_entry { session_id: 5 '
                            'replicas { port: "\\000\\004" instance: 2 } class_of_service: 1 packet_length_bytes: 64 } }'))
    codec.write(INSERT, ent("packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 3 "
                            "replicas { egress_port: 1 instance: 1 } } }"))
    [cs] = codec.read(ent("packet_replication_engine_entry { clone_session_entry { } }"))
    replica = cs.packet_replication_engine_entry.clone_session_entry.replicas[0]
    assert replica.WhichOneof("port_kind") == "port" and replica.port == b"\x04"
    session = codec.state.pre.clone_sessions[5]
    assert (session.replicas[0].port, session.class_of_service, session.packet_length_bytes) == (4, 1, 64)
    [mg] = codec.read(ent("packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 3 } }"))
    assert mg.packet_replication_engine_entry.multicast_group_entry.replicas[0].egress_port == 1
    assert code_of(codec, MODIFY, "packet_replication_engine_entry { multicast_group_entry { "
                                  "multicast_group_id: 4 } }") == "NOT_FOUND"


def test_digest_entries_and_value_sets(codec: EntityCodec) -> None:
    digest = "digest_entry { digest_id: 385875969 config { max_timeout_ns: 1000 max_list_size: 4 } }"
    assert code_of(codec, MODIFY, digest) == "NOT_FOUND"
    assert code_of(codec, INSERT, digest) == "OK"
    assert code_of(codec, INSERT, digest) == "ALREADY_EXISTS"
    [read] = codec.read(ent("digest_entry { }"))
    assert read.digest_entry.config.max_list_size == 4
    assert codec.state.digests["learn_t"].bitwidths == [48, 9]
    assert code_of(codec, DELETE, digest) == "OK"
    assert codec.read(ent("digest_entry { }")) == []

    vs = ('value_set_entry { value_set_id: 50331649 members { match { field_id: 1 '
          'ternary { value: "\\010\\000" mask: "\\377\\000" } } } }')
    assert code_of(codec, MODIFY, vs) == "OK"
    assert codec.state.value_sets["P.vs"].matches((0x0806,))
    [read_vs] = codec.read(ent("value_set_entry { value_set_id: 50331649 }"))
    assert read_vs.value_set_entry.members[0].match[0].ternary.mask == b"\xff\x00"


def test_load_write_request(tmp_path: Path) -> None:
    p4info = text_format.Parse((CONFORMANCE / "p4info" / "runtime_tables.p4info.txtpb").read_text(),
                               p4info_pb2.P4Info())
    state = RuntimeState.from_p4info(p4info)
    assert load_write_request(state, p4info, CONFORMANCE / "cases" / "runtime_tables" / "entries.txtpb") == 10
    assert state.tables["I.ipv4_lpm"].lookup((0x0A010105,))[2] == (1,)
    assert state.tables["I.ipv4_lpm"].lookup((0x0B000000,))[:3] == (False, 28749719, (0,))
    bad = tmp_path / "bad.txtpb"
    bad.write_text("updates { type: INSERT entity { table_entry { table_id: 1 } } }")
    with pytest.raises(EntriesFileError, match="update 1: INVALID_ARGUMENT"):
        load_write_request(state, None, bad)
    bad.write_text("this is not protobuf")
    with pytest.raises(EntriesFileError, match="not a WriteRequest"):
        load_write_request(state, None, bad)
    with pytest.raises(EntriesFileError):
        load_write_request(state, None, tmp_path / "missing.txtpb")


@pytest.mark.parametrize(("kind", "text", "expected"), [
    (INSERT, "packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 32768 } }", "OUT_OF_RANGE"),
    (INSERT, "packet_replication_engine_entry { clone_session_entry { session_id: 0 } }", "OUT_OF_RANGE"),
    (INSERT, "packet_replication_engine_entry { clone_session_entry { session_id: 512 } }", "OUT_OF_RANGE"),
    (INSERT, "packet_replication_engine_entry { clone_session_entry { session_id: 511 } }", "OK"),
    (MODIFY, "counter_entry { counter_id: 302000001 data { packet_count: 1 } }", "UNIMPLEMENTED"),  # wildcard
    (MODIFY, "meter_entry { meter_id: 335544321 config { cir: 1 cburst: 1 pir: 2 pburst: 2 } }", "UNIMPLEMENTED"),
    (MODIFY, "meter_entry { meter_id: 335544321 index { index: 0 } config { cir: -2 } }", "INVALID_ARGUMENT"),
    (MODIFY, 'table_entry { table_id: 33554433 is_default_action: true time_since_last_hit { } }', "INVALID_ARGUMENT"),
])
def test_pi_limits_and_unsupported_forms(codec: EntityCodec, kind: int, text: str, expected: str) -> None:
    assert code_of(codec, kind, text) == expected


def test_replicas_read_back_ordered_by_instance_then_port(codec: EntityCodec) -> None:
    codec.write(INSERT, ent("packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 9 "
                            "replicas { egress_port: 3 instance: 2 } replicas { egress_port: 7 instance: 1 } "
                            "replicas { egress_port: 1 instance: 2 } } }"))
    [group] = codec.read(ent("packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 9 } }"))
    replicas = group.packet_replication_engine_entry.multicast_group_entry.replicas
    assert [(r.instance, r.egress_port) for r in replicas] == [(1, 7), (2, 1), (2, 3)]


def test_time_since_last_hit_needs_a_table_with_idle_timeout(codec: EntityCodec) -> None:
    with pytest.raises(RuntimeStateError) as exc:
        codec.read(ent("table_entry { table_id: 33554433 time_since_last_hit { } }"))
    assert exc.value.code == code_pb2.INVALID_ARGUMENT
