"""`controller.program.switch_job_entities`, the one builder of a switch's job entries (used by the controller, the
benchmarks and the test fabrics): the entries docs/p4-program.md lists for a root and for a member switch, decoded
back by name from the documented P4Info."""

from __future__ import annotations

from typing import Any

import pytest
from controller_program_p4info import documented_p4info

from controller.exceptions import P4InfoError
from controller.p4info import P4InfoHelper
from controller.plan import Child, SwitchJobPlan
from controller.program import switch_job_entities

ING, EGR = "P4inaIngress", "P4inaEgress"


def _decode(helper: P4InfoHelper, e: Any) -> tuple[str, dict[str, int], str, dict[str, int]]:
    """(table, match field -> value, action, param -> value) of a table entry, by P4Info names."""
    te = e.table_entry
    table = next(t for t in helper.p4info.tables if t.preamble.id == te.table_id)
    fields = {f.id: f.name for f in table.match_fields}
    action = next(a for a in helper.p4info.actions if a.preamble.id == te.action.action.action_id)
    params = {p.id: p.name for p in action.params}
    return (table.preamble.name, {fields[m.field_id]: int.from_bytes(m.exact.value, "big") for m in te.match},
            action.preamble.name,
            {params[p.param_id]: int.from_bytes(p.value, "big") for p in te.action.action.params})


def _plan(**kw: Any) -> SwitchJobPlan:
    children = (Child(port=1, index=0, name="h1", is_host=True, ip="10.0.0.1", mac="00:00:00:00:00:01",
                      udp_port=40001),
                Child(port=2, index=1, name="h2", is_host=True, ip="10.0.0.2", mac="00:00:00:00:00:02",
                      udp_port=40002))
    base: dict[str, Any] = {"job_id": 7, "switch": "leaf1", "role": "leaf", "is_root": False, "slot_base": 32,
                            "slot_count": 16, "group": 3, "quant": "int32", "children": children, "job_idx": 2,
                            "scale": -2, "parent": "spine1", "parent_port": 3, "index_at_parent": 1}
    base.update(kw)
    return SwitchJobPlan(**base)


def test_member_switch_entries() -> None:
    helper = P4InfoHelper(documented_p4info())
    out = switch_job_entities(helper, _plan(), my_mac="02:00:00:ff:00:03", my_ip="10.255.0.3",
                              parent_mac="02:00:00:ff:00:04", parent_ip="10.255.0.4")
    group = out[0].packet_replication_engine_entry.multicast_group_entry
    assert group.multicast_group_id == 3
    assert [(r.egress_port, r.instance) for r in group.replicas] == [(1, 0), (2, 1)]
    rows = [_decode(helper, e) for e in out[1:]]
    assert rows[0] == (f"{ING}.admission.job", {"hdr.agg.job_id": 7}, f"{ING}.admission.set_job_member",
                       {"job_idx": 2, "slot_base": 32, "slot_count": 16, "children": 2, "mcast_grp": 3,
                        "scale": 0xFE, "parent_port": 3, "my_index": 1})
    admits = [r for r in rows if r[0] == f"{ING}.admission.agg_children"]
    assert [r[1] for r in admits] == [
        {"standard_metadata.ingress_port": 1, "hdr.agg.job_id": 7, "hdr.agg.child": 0},
        {"standard_metadata.ingress_port": 2, "hdr.agg.job_id": 7, "hdr.agg.child": 1}]
    neighbours = {r[1]["standard_metadata.egress_port"]: r[3] for r in rows
                  if r[0] == f"{EGR}.agg_rewrite.agg_neighbors"}
    assert set(neighbours) == {1, 2, 3}
    assert neighbours[2] == {"src_mac": 0x020000FF0003, "dst_mac": 0x000000000002, "src_addr": 0x0AFF0003,
                             "dst_addr": 0x0A000002, "dst_port": 40002}
    assert neighbours[3] == {"src_mac": 0x020000FF0003, "dst_mac": 0x020000FF0004, "src_addr": 0x0AFF0003,
                             "dst_addr": 0x0AFF0004, "dst_port": 0xBEE0}  # docs/protocol.md: switches on 48864
    assert len(rows) == 1 + 2 + 3


@pytest.mark.parametrize(("quant", "fmt"), [("int32", 0), ("int16", 1), ("int8", 2)])
def test_root_switch_sends_results_in_the_job_format(quant: str, fmt: int) -> None:
    helper = P4InfoHelper(documented_p4info())
    plan = _plan(is_root=True, role="root", quant=quant, parent=None, parent_port=None, index_at_parent=None)
    rows = [_decode(helper, e) for e in switch_job_entities(helper, plan, my_mac="02:00:00:ff:00:03",
                                                            my_ip="10.255.0.3")[1:]]
    assert rows[0][2] == f"{ING}.admission.set_job_root" and rows[0][3]["result_fmt"] == fmt
    assert "parent_port" not in rows[0][3]
    assert sorted(r[1]["standard_metadata.egress_port"] for r in rows
                  if r[0] == f"{EGR}.agg_rewrite.agg_neighbors") == [1, 2]  # no parent entry


def test_member_without_its_parent_port_is_refused() -> None:
    helper = P4InfoHelper(documented_p4info())
    with pytest.raises(P4InfoError, match="parent port"):
        switch_job_entities(helper, _plan(parent_port=None), my_mac="02:00:00:ff:00:03", my_ip="10.255.0.3")


def test_a_neighbour_without_an_address_is_refused() -> None:
    helper = P4InfoHelper(documented_p4info())
    with pytest.raises(P4InfoError, match="no MAC/IP"):
        switch_job_entities(helper, _plan(), my_mac="02:00:00:ff:00:03", my_ip="10.255.0.3")
