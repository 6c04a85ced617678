"""P4Info byte for byte: our compiler's text output equals what real p4c-bm2-ss wrote for the conformance corpus,
and the id/alias rules (Jenkins hash, prefixes, probing in sorted order, @id, shortest unique suffix) hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.compiler import compile_file
from p4switch.frontend import cpmodel as cp
from p4switch.frontend.symbols import IdPrefix, SymbolError, SymbolTable, jenkins_one_at_a_time
from p4switch.p4info import build_p4info, to_text

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"
PROGRAMS = sorted(p.stem for p in (CONFORMANCE / "programs").glob("*.p4"))


@pytest.mark.parametrize("name", PROGRAMS)
def test_p4info_text_equals_p4c(name: str) -> None:
    compiled = compile_file(CONFORMANCE / "programs" / f"{name}.p4")
    expected = (CONFORMANCE / "p4info" / f"{name}.p4info.txtpb").read_text()
    assert compiled.p4info_text() == expected


def test_jenkins_hash_gives_p4c_ids() -> None:
    # values taken from the p4c output in tests/conformance/p4info
    assert (0x01 << 24) | (jenkins_one_at_a_time(b"NoAction") & 0xFFFFFF) == 21257015
    assert (0x16 << 24) | (jenkins_one_at_a_time(b"I.bitmap") & 0xFFFFFF) == 385092635


def test_collisions_are_probed_in_sorted_name_order() -> None:
    table = SymbolTable()
    table.add(IdPrefix.ACTION, "b")
    explicit = (0x01 << 24) | (jenkins_one_at_a_time(b"b") & 0xFFFFFF)
    table.add(IdPrefix.ACTION, "a", explicit)  # @id takes b's hashed id: b must move to the next free one
    assert table.id_of(IdPrefix.ACTION, "a") == explicit
    assert table.id_of(IdPrefix.ACTION, "b") == explicit + 1


def test_explicit_id_gets_prefix_and_wrong_prefix_is_rejected() -> None:
    table = SymbolTable()
    table.add(IdPrefix.TABLE, "t", 5)
    assert table.id_of(IdPrefix.TABLE, "t") == (0x02 << 24) | 5
    with pytest.raises(SymbolError, match="wrong 8-bit prefix"):
        table.add(IdPrefix.TABLE, "u", 0x01000005)


def test_alias_is_shortest_unique_suffix() -> None:
    table = SymbolTable()
    for name in ("I.a.t", "I.b.t", "E.c", "NoAction"):
        table.add(IdPrefix.TABLE, name)
    assert table.alias("I.a.t") == "a.t"
    assert table.alias("E.c") == "c"
    assert table.alias("NoAction") == "NoAction"


def test_model_features_outside_the_corpus() -> None:
    model = cp.ControlPlane(
        tables=[cp.Table("I.t", [cp.MatchField("h.x", 8, "exact")], [cp.ActionRef("I.a", ["@defaultonly"])],
                         cp.DefaultAction("I.a", [(7, 16)], True), size=16, direct_counter="I.dc")],
        actions=[cp.Action("I.a", [cp.Param("v", 16)])],
        counters=[cp.Counter("I.dc", "BOTH", direct_table="I.t")],
        controller_headers=[cp.ControllerHeader("packet_in", "packet_in_t", [cp.Param("port", 9)],
                                                ['@controller_header("packet_in")'])],
        type_info_used=True,
    )
    info = build_p4info(model)
    table = info.tables[0]
    assert table.const_default_action_id == info.actions[0].preamble.id
    assert table.initial_default_action.arguments[0].value == b"\x00\x07"
    assert table.action_refs[0].scope == table.action_refs[0].DEFAULT_ONLY
    assert table.direct_resource_ids == [info.direct_counters[0].preamble.id]
    assert info.direct_counters[0].preamble.id >> 24 == 0x13
    assert info.controller_packet_metadata[0].preamble.alias == "packet_in"
    # p4c hashes the header type's name (SONiC's packet_in_header_t has id 81826293 in its P4Info)
    assert info.controller_packet_metadata[0].preamble.id == (0x04 << 24) | (
        jenkins_one_at_a_time(b"packet_in_t") & 0xFFFFFF)
    assert info.controller_packet_metadata[0].preamble.name == "packet_in"
    assert to_text(info).startswith("# proto-file: p4/config/v1/p4info.proto\n")


def test_table_without_default_action_gets_defaultonly_noaction() -> None:
    from compiler_support import program

    from p4switch.compiler import compile_text

    src = program(decls="header a_t { bit<8> x; } struct headers_t { a_t a; }",
                  parser="state start { pkt.extract(h.a); transition accept; }",
                  ingress_locals="action fwd(bit<9> p) { sm.egress_spec = p; } "
                                 "table t { key = { h.a.x : exact; } actions = { fwd; } }",
                  ingress="t.apply();", deparser="pkt.emit(h.a);")
    info = compile_text(src, "nodefault").p4info
    table = info.tables[0]
    no_action = next(a.preamble.id for a in info.actions if a.preamble.name == "NoAction")
    assert [(r.id, list(r.annotations), r.scope) for r in table.action_refs][-1] == (
        no_action, ["@defaultonly"], table.action_refs[0].DEFAULT_ONLY)
    assert table.initial_default_action.action_id == no_action
    assert not table.const_default_action_id
