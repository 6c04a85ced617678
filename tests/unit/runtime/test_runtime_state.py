"""RuntimeState: lookups per match kind and winner rules, BMv2 entry handles, meters with BMv2's trTCM
arithmetic, counters, registers, digests (batching, dedup until ack, timeouts), value sets, const entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from p4switch.runtime.state import (
    EXACT,
    GREEN,
    LPM,
    OPTIONAL,
    RANGE,
    RED,
    TERNARY,
    YELLOW,
    DigestConfig,
    DigestList,
    MatchFieldInfo,
    MeterCell,
    MeterConfig,
    RuntimeState,
    RuntimeStateError,
    TableState,
)

P4INFO_DIR = Path(__file__).resolve().parents[2] / "conformance" / "p4info"


def p4info(name: str) -> p4info_pb2.P4Info:
    return text_format.Parse((P4INFO_DIR / f"{name}.p4info.txtpb").read_text(), p4info_pb2.P4Info())


def table(*kinds: int, width: int = 8, size: int = 0) -> TableState:
    fields = [MatchFieldInfo(i + 1, f"f{i}", width, k) for i, k in enumerate(kinds)]
    return TableState("t", 1, fields, [10, 11], size)


def add(t: TableState, match: tuple[tuple[int, int], ...], priority: int, arg: int) -> None:
    t.insert(t.new_entry(match, priority, 10, (arg,)))


def test_exact_is_a_dict_lookup_and_misses_give_the_default() -> None:
    t = table(EXACT, EXACT)
    t.set_default(11, ())
    add(t, ((1, 255), (2, 255)), 0, 7)
    hit, action, args, entry = t.lookup((1, 2))
    assert (hit, action, args) == (True, 10, (7,)) and entry is not None
    assert t.lookup((2, 1)) == (False, 11, (), None)


def test_lpm_longest_prefix_wins_whatever_the_insertion_order() -> None:
    t = table(LPM, width=32)
    add(t, ((0x0A010100, 0xFFFFFF00),), 0, 24)
    add(t, ((0x0A000000, 0xFF000000),), 0, 8)
    add(t, ((0x0A010000, 0xFFFF0000),), 0, 16)
    assert t.lookup((0x0A010105,))[2] == (24,)
    assert t.lookup((0x0A01FF05,))[2] == (16,)
    assert t.lookup((0x0AFF0000,))[2] == (8,)
    assert t.lookup((0x0B000000,))[0] is False
    t.delete(((0x0A010100, 0xFFFFFF00),), 0)
    assert t.lookup((0x0A010105,))[2] == (16,)


def test_ternary_highest_priority_wins_then_the_earlier_entry() -> None:
    t = table(TERNARY, TERNARY)
    add(t, ((6, 0xFF), (0, 0)), 10, 1)
    add(t, ((0, 0), (0xC0, 0xF0)), 20, 2)
    add(t, ((0, 0), (0xC0, 0xC0)), 20, 3)  # same priority, inserted later: loses ties
    assert t.lookup((6, 0xC1))[2] == (2,)
    assert t.lookup((6, 0x01))[2] == (1,)
    assert t.lookup((7, 0xF1))[2] == (3,)
    t.delete(((0, 0), (0xC0, 0xF0)), 20)
    assert t.lookup((6, 0xC1))[2] == (3,)


def test_range_and_optional() -> None:
    t = table(RANGE, OPTIONAL)
    add(t, ((10, 20), (5, 255)), 1, 1)
    add(t, ((15, 30), (0, 0)), 2, 2)
    assert t.lookup((12, 5))[2] == (1,)
    assert t.lookup((16, 5))[2] == (2,)
    assert t.lookup((12, 6))[0] is False
    assert t.lookup((31, 5))[0] is False


def test_duplicates_missing_entries_and_full_tables_are_refused() -> None:
    t = table(EXACT, size=1)
    add(t, ((1, 255),), 0, 1)
    with pytest.raises(RuntimeStateError) as dup:
        add(t, ((1, 255),), 0, 2)
    assert dup.value.code == 6  # ALREADY_EXISTS
    with pytest.raises(RuntimeStateError) as full:
        add(t, ((2, 255),), 0, 2)
    assert full.value.code == 8  # RESOURCE_EXHAUSTED
    with pytest.raises(RuntimeStateError) as missing:
        t.delete(((3, 255),), 0)
    assert missing.value.code == 5  # NOT_FOUND


def test_entries_reuse_the_lowest_free_handle_like_bmv2() -> None:
    t = table(EXACT)
    for v in (1, 2, 3):
        add(t, ((v, 255),), 0, v)
    t.delete(((1, 255),), 0)
    add(t, ((9, 255),), 0, 9)
    assert [e.action_args for e in t.entries()] == [(9,), (2,), (3,)]


def test_meter_follows_bmv2_token_arithmetic() -> None:
    cell = MeterCell()
    assert cell.execute(1, 0) == GREEN  # unconfigured meters are green
    cell.configure(MeterConfig(cir=1000, cburst=2, pir=2000, pburst=3))  # packets per second
    colors = [cell.execute(1, 10) for _ in range(4)]
    assert colors == [GREEN, GREEN, YELLOW, RED]
    # 1 ms later: 2 peak tokens and 1 committed token have been added
    assert [cell.execute(1, 1010) for _ in range(3)] == [GREEN, YELLOW, RED]


def test_indexed_meter_and_counter_ignore_out_of_range_indices() -> None:
    state = RuntimeState.from_p4info(p4info("stateful"))
    counter = state.counters["I.per_idx"]
    counter.count(3, 64)
    counter.count(99, 64)
    assert counter.packets[3] == 1 and sum(counter.packets) == 1
    assert [r.name for r in state.registers] == ["I.acc", "I.hits", "I.seq"]
    assert state.registers[369168620].bitwidth == 32 and len(state.registers["I.hits"].cells) == 16


def test_digest_batches_dedups_until_acked_and_flushes_on_timeout() -> None:
    from p4switch.runtime.state import DigestState

    digest = DigestState("d", 7, [8, 16])
    sent: list[DigestList] = []
    digest.sink = sent.append
    digest.push((1, 2), 0)
    assert digest.dropped == 1 and not sent  # no DigestEntry yet
    digest.configure(DigestConfig(max_timeout_ns=1000, max_list_size=2, ack_timeout_ns=5000))
    digest.push((1, 2), 0)
    digest.push((1, 2), 10)  # pending duplicate
    digest.push((3, 4), 20)
    assert [d.data for d in sent] == [[(1, 2), (3, 4)]]
    digest.push((1, 2), 30)  # sent, not acked: suppressed
    digest.push((5, 6), 40)
    digest.poll(500)
    assert len(sent) == 1
    digest.poll(1040)
    assert [d.data for d in sent][1] == [(5, 6)]
    assert digest.ack(sent[0].list_id) and not digest.ack(999)
    digest.push((1, 2), 2000)
    digest.poll(3000)
    assert sent[-1].data == [(1, 2)]
    digest.poll(9000)  # (5, 6) was never acked: forgotten after ack_timeout_ns
    digest.push((5, 6), 9000)
    digest.poll(10_500)
    assert sent[-1].data == [(5, 6)]


def test_const_entries_and_default_override_from_the_device_config() -> None:
    config = {"tables": {"I.acl": {
        "const_entries": [
            {"match": [{"value": 6, "mask": 255}, None], "action_id": 33522068, "args": [1]},
            {"match": [None, {"value": 0xC0A80000, "prefix_len": 16}], "action_id": 33522068, "args": [2]},
        ],
        "default_action": {"action_id": 33522068, "args": [9], "const": True}}}}
    state = RuntimeState.from_p4info(p4info("runtime_tables"), config)
    acl = state.tables["I.acl"]
    assert acl.lookup((6, 0xC0A80101))[2] == (1,)  # earlier in source wins
    assert acl.lookup((17, 0xC0A80101))[2] == (2,)
    assert acl.lookup((17, 1))[:3] == (False, 33522068, (9,))
    assert acl.default_is_const and not any(e.is_const for e in acl.entries())  # not a const table: mutable
    acl.delete(*acl.entries()[0].ident)  # type: ignore[arg-type]
    state.reset()
    assert [e.action_args for e in acl.entries()] == [(1,), (2,)]


def test_const_tables_mark_their_entries_const() -> None:
    info = p4info("tables")
    plain = RuntimeState.from_p4info(info)
    table = next(t for t in plain.tables if t.is_const)
    action = plain.actions[table.action_ids[0]]
    spec = {"match": [{"value": 0} if f.kind == EXACT else None for f in table.match_fields],
            "priority": 1 if table.needs_priority else None,
            "action_id": action.preamble.id, "args": [0] * len(action.params)}
    state = RuntimeState.from_p4info(info, {"tables": {table.name: {"const_entries": [spec]}}})
    [entry] = state.tables[table.id].entries()
    assert entry.is_const


def test_p4info_defaults_and_lookup_by_name_or_id() -> None:
    state = RuntimeState.from_p4info(p4info("runtime_tables"))
    assert state.tables["I.ipv4_lpm"] is state.tables[49652232]
    assert state.tables["I.ipv4_lpm"].lookup((1,)) == (False, 32117294, (), None)
    assert state.tables.get("nope") is None and len(state.tables) == 3


def test_value_set_membership() -> None:
    from p4switch.runtime.state import ValueSetState

    vs = ValueSetState("v", 1, [MatchFieldInfo(1, "etype", 16, EXACT)], 4)
    vs.members = [((0x0800, 0xFFFF),), ((0x8800, 0xFF00),)]
    assert vs.matches((0x0800,)) and vs.matches((0x88B5,)) and not vs.matches((0x86DD,))


def test_direct_counters_and_meters_act_on_hits_only_as_in_bmv2() -> None:
    from p4switch.runtime.state import DirectCounterState, DirectMeterState

    t = table(EXACT)
    t.direct_meter_in_bytes = True
    add(t, ((1, 255),), 0, 1)
    counter, meter = DirectCounterState("c", 1, t, 3), DirectMeterState("m", 2, t, True)
    hit, _, _, entry = t.lookup((1,))
    assert hit and entry is not None and entry.meter is not None
    entry.meter.configure(MeterConfig(cir=0, cburst=100, pir=0, pburst=150))
    counter.count(entry, 120)
    assert (entry.packets, entry.bytes) == (1, 120)
    assert meter.execute(entry, 120, 5) == YELLOW  # 120 bytes fit the peak burst, not the committed one
    miss_entry = t.lookup((2,))[3]
    counter.count(miss_entry, 64)
    assert meter.execute(miss_entry, 10_000, 5) == GREEN
    assert (t.default_entry.packets, t.default_entry.bytes) == (0, 0)


def test_meter_rate_minus_one_is_always_green() -> None:
    cell = MeterCell()
    cell.configure(MeterConfig(cir=-1, cburst=-1, pir=-1, pburst=-1))
    assert [cell.execute(10_000, t) for t in range(5)] == [GREEN] * 5


def test_digest_without_ack_timeout_reports_duplicates_and_size_zero_waits_for_the_timeout() -> None:
    from p4switch.runtime.state import DigestState

    digest = DigestState("d", 7, [8])
    sent: list[DigestList] = []
    digest.sink = sent.append
    digest.configure(DigestConfig(max_timeout_ns=0, max_list_size=0, ack_timeout_ns=0))
    digest.push((1,), 0)
    digest.push((1,), 1)
    assert [d.data for d in sent] == [[(1,)], [(1,)]]  # no filter without an ack timeout; timeout 0: at once
    digest.configure(DigestConfig(max_timeout_ns=100, max_list_size=0, ack_timeout_ns=0))
    digest.push((2,), 10)
    digest.push((3,), 20)
    digest.poll(50)
    assert len(sent) == 2
    digest.poll(110)
    assert sent[-1].data == [(2,), (3,)]


def test_idle_timeout_tables_track_hits_and_report_each_idle_period_once() -> None:
    fields = [MatchFieldInfo(1, "k", 8, EXACT)]
    t = TableState("t", 1, fields, [10], 0, supports_idle_timeout=True)
    entry = t.new_entry(((1, 255),), 0, 10, (), idle_timeout_ns=1_000, last_hit_ns=0)
    t.insert(entry)
    quiet = t.new_entry(((2, 255),), 0, 10, ())  # no TTL: never reported
    t.insert(quiet)
    assert t.expired(500) == [] and t.expired(1_000) == [entry] and t.expired(5_000) == []
    t.lookup((1,))  # a hit re-arms the entry
    assert entry.last_hit_ns > 0 and t.expired(entry.last_hit_ns + 999) == []
    assert t.expired(entry.last_hit_ns + 1_000) == [entry]
    plain = table(EXACT)
    add(plain, ((1, 255),), 0, 1)
    assert plain.lookup((1,))[3].last_hit_ns == 0  # type: ignore[union-attr]  # untimed tables pay nothing
