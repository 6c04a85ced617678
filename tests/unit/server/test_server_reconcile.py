"""RECONCILE_AND_COMMIT's carry-over (`p4switch.server.pipeline`): entries with their direct counter and meter data,
default actions, PRE, registers, counters and meter configs survive into a new state wherever they still fit."""

from __future__ import annotations

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.runtime.entries import EntityCodec
from p4switch.runtime.state import RuntimeState
from p4switch.server.pipeline import carry_externs, restore, snapshot

P4INFO = """
tables {
  preamble { id: 33554433 name: "I.t" alias: "t" }
  match_fields { id: 1 name: "k" bitwidth: 8 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  direct_resource_ids: 318767105
  direct_resource_ids: 352321537
  size: 16
}
actions { preamble { id: 16777217 name: "I.set" alias: "set" } params { id: 1 name: "v" bitwidth: 4 } }
actions { preamble { id: 16777218 name: "I.miss" alias: "miss" } }
direct_counters { preamble { id: 318767105 name: "I.t_counter" } spec { unit: BOTH } direct_table_id: 33554433 }
direct_meters { preamble { id: 352321537 name: "I.t_meter" } spec { unit: BYTES } direct_table_id: 33554433 }
counters { preamble { id: 302000001 name: "I.cnt" } spec { unit: BOTH } size: 4 }
meters { preamble { id: 335544321 name: "I.m" } spec { unit: PACKETS } size: 2 }
registers {
  preamble { id: 369098753 name: "I.r" }
  type_spec { bitstring { bit { bitwidth: 12 } } }
  size: 3
}
"""

WRITES = [
    (p4runtime_pb2.Update.INSERT, 'table_entry { table_id: 33554433 match { field_id: 1 exact { value: "\\001" } } '
                                  'action { action { action_id: 16777217 params { param_id: 1 value: "\\002" } } } '
                                  'meter_config { cir: 10 cburst: 5 pir: 20 pburst: 8 } }'),
    (p4runtime_pb2.Update.MODIFY, 'table_entry { table_id: 33554433 is_default_action: true '
                                  'action { action { action_id: 16777218 } } }'),
    (p4runtime_pb2.Update.INSERT, "packet_replication_engine_entry { multicast_group_entry { multicast_group_id: 4 "
                                  "replicas { egress_port: 2 instance: 1 } } }"),
    (p4runtime_pb2.Update.INSERT, "packet_replication_engine_entry { clone_session_entry { session_id: 3 "
                                  "replicas { egress_port: 5 } } }"),
    (p4runtime_pb2.Update.MODIFY, "meter_entry { meter_id: 335544321 index { index: 1 } "
                                  "config { cir: 1 cburst: 1 pir: 2 pburst: 2 } }"),
]


def build(p4info: p4info_pb2.P4Info) -> RuntimeState:
    return RuntimeState.from_p4info(p4info)


def test_reconcile_carries_everything_that_still_fits() -> None:
    p4info = text_format.Parse(P4INFO, p4info_pb2.P4Info())
    old = build(p4info)
    codec = EntityCodec(old)
    for kind, text in WRITES:
        codec.write(kind, text_format.Parse(text, p4runtime_pb2.Entity()))
    [entry] = old.tables["I.t"].entries()
    entry.packets, entry.bytes = 3, 300
    old.registers["I.r"].cells[2] = 4095
    old.counters["I.cnt"].count(1, 64)

    new = build(p4info)
    kept = restore(new, snapshot(old))
    assert kept == len(WRITES)
    assert carry_externs(old, new) == 2
    [moved] = new.tables["I.t"].entries()
    assert (moved.action_args, moved.packets, moved.bytes) == ((2,), 3, 300)
    assert moved.meter is not None and moved.meter.config is not None and moved.meter.config.pir == 20
    assert new.tables["I.t"].lookup((9,))[1] == 16777218
    assert [r.port for r in new.pre.replicas(4)] == [2] and new.pre.clone_sessions[3].replicas[0].port == 5
    assert new.meters["I.m"].cells[1].config is not None
    assert new.registers["I.r"].cells == [0, 0, 4095]
    assert (new.counters["I.cnt"].packets[1], new.counters["I.cnt"].bytes[1]) == (1, 64)

    smaller = text_format.Parse(P4INFO, p4info_pb2.P4Info())
    del smaller.tables[:]
    del smaller.direct_counters[:]
    del smaller.direct_meters[:]
    smaller.registers[0].size = 4  # a different shape: not carried over
    trimmed = build(smaller)
    assert restore(trimmed, snapshot(old)) == 3  # the PRE entries and the meter config
    assert carry_externs(old, trimmed) == 1 and trimmed.registers["I.r"].cells == [0, 0, 0, 0]


SELECTOR_P4INFO = """
tables {
  preamble { id: 33554434 name: "I.ecmp" alias: "ecmp" }
  match_fields { id: 1 name: "k" bitwidth: 8 match_type: EXACT }
  action_refs { id: 16777217 }
  implementation_id: 285212673
  size: 16
}
actions { preamble { id: 16777217 name: "I.set" alias: "set" } params { id: 1 name: "v" bitwidth: 4 } }
action_profiles {
  preamble { id: 285212673 name: "I.sel" alias: "sel" }
  table_ids: 33554434
  with_selector: true
  size: 16
}
"""


def test_reconcile_carries_members_groups_and_the_entries_using_them() -> None:
    p4info = text_format.Parse(SELECTOR_P4INFO, p4info_pb2.P4Info())
    old = build(p4info)
    codec = EntityCodec(old)
    writes = [
        'action_profile_member { action_profile_id: 285212673 member_id: 1 action { action_id: 16777217 '
        'params { param_id: 1 value: "\\003" } } }',
        'action_profile_group { action_profile_id: 285212673 group_id: 5 members { member_id: 1 weight: 1 } }',
        'table_entry { table_id: 33554434 match { field_id: 1 exact { value: "\\001" } } '
        'action { action_profile_group_id: 5 } }',
    ]
    for text in writes:
        codec.write(p4runtime_pb2.Update.INSERT, text_format.Parse(text, p4runtime_pb2.Entity()))
    new = build(p4info)
    assert restore(new, snapshot(old)) == 3  # members and groups come back before the entries pointing at them
    profile = new.action_profiles["I.sel"]
    assert profile.groups[5].choices == ((16777217, (3,)),)
    [entry] = new.tables["I.ecmp"].entries()
    assert entry.ref == ("group", 5) and profile.groups[5].table_refs == 1
