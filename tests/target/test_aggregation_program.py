"""p4src/p4ina.p4 compiles with the embedded compiler, and its P4Info is the interface docs/p4-program.md
documents: every documented name exists with the documented widths, and every table, counter and control-plane
action of the program is documented."""

from __future__ import annotations

import re

from aggnet import PROGRAM, REPO, compiled_program

DOC = REPO / "docs" / "p4-program.md"
NAME = re.compile(r"`(P4ina(?:Ingress|Egress)\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+)")


def _documented() -> set[str]:
    return set(NAME.findall(DOC.read_text()))


def test_documented_names_exist() -> None:
    p4info, _ = compiled_program()
    names = {x.preamble.name for group in (p4info.tables, p4info.actions, p4info.counters, p4info.registers)
             for x in group}
    missing = sorted(n for n in _documented() if n not in names)
    assert not missing, f"documented but not in the P4Info: {missing}"


def test_control_plane_objects_are_documented() -> None:
    p4info, _ = compiled_program()
    documented = _documented()
    in_tables = {ref.id for t in p4info.tables for ref in t.action_refs}
    objects = [t.preamble.name for t in p4info.tables] + [c.preamble.name for c in p4info.counters]
    objects += [a.preamble.name for a in p4info.actions if a.preamble.id in in_tables and a.preamble.name != "NoAction"]
    undocumented = sorted(n for n in objects if n not in documented)
    assert not undocumented, f"in the P4Info but not in docs/p4-program.md: {undocumented}"


def test_documented_widths() -> None:
    p4info, _ = compiled_program()
    tables = {t.preamble.name: t for t in p4info.tables}
    actions = {a.preamble.name: a for a in p4info.actions}
    assert [(m.name, m.bitwidth) for m in tables["P4inaIngress.admission.agg_children"].match_fields] == [
        ("standard_metadata.ingress_port", 9), ("hdr.agg.job_id", 16), ("hdr.agg.child", 5)]
    assert [(p.name, p.bitwidth) for p in actions["P4inaIngress.admission.set_job_member"].params] == [
        ("job_idx", 8), ("slot_base", 16), ("slot_count", 16), ("children", 8), ("mcast_grp", 16), ("scale", 8),
        ("parent_port", 9), ("my_index", 5)]
    assert [(p.name, p.bitwidth) for p in actions["P4inaEgress.agg_rewrite.set_neighbor"].params] == [
        ("src_mac", 48), ("dst_mac", 48), ("src_addr", 32), ("dst_addr", 32), ("dst_port", 16)]
    counters = {c.preamble.name: c.size for c in p4info.counters}
    assert counters["P4inaIngress.output.agg_drops"] == 136 and counters["P4inaIngress.output.agg_packets"] == 17
    regs = [r.preamble.name for r in p4info.registers if re.fullmatch(r".*\.agg_v[0-7][0-7]", r.preamble.name)]
    assert len(regs) == 64


def test_top_level_only_wires() -> None:
    """fabric-tna style: the top level includes and wires; no table, action or extern instance lives there."""
    text = PROGRAM.read_text()
    assert not re.search(r"\b(table|action|register|counter)\b\s", text.split("control P4inaIngress", 1)[1])


def test_sizes_come_from_defines() -> None:
    """`-DAGG_SLOTS=... -DMAX_JOBS=...` resize every register array and per-job counter together."""

    from p4switch import compiler
    info = compiler.compile_file(str(PROGRAM), defines={"AGG_SLOTS": "2048", "MAX_JOBS": "4"}).p4info
    assert {r.size for r in info.registers if r.preamble.name.startswith("P4inaIngress.aggregation.")} == {4096}
    counters = {c.preamble.name: c.size for c in info.counters}
    assert counters["P4inaIngress.output.agg_drops"] == 5 * 8
    assert counters["P4inaIngress.output.agg_packets"] == 5
