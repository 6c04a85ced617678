"""Hot-standby workers on loopback P4Runtime doubles: `replace_member` moves a dead worker's rank to a spare.

Expected entries follow the task's rule (docs/controller.md, "Spares and replacement"): a spare on the dead worker's
leaf takes the dead worker's child index (admission entry (spare port, job, index)), the other children keep theirs,
the spare takes the dead worker's rank; a refused replacement leaves switches and record as they were."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from controller_p4rt_double import DoubleServer
from controller_program_p4info import documented_p4info
from doubled_fabric import Env, doubled_leaf_spine, job_manager

from controller.client import entity, update
from controller.exceptions import JobError, RpcError
from controller.fabric import Fabric
from controller.jobs import JobManager
from controller.p4info import P4InfoHelper
from controller.topology import Topology

HELPER = P4InfoHelper(documented_p4info())


@pytest.fixture
def fabric() -> Iterator[Env]:
    with doubled_leaf_spine(hosts_per_leaf=3) as env:
        yield env


def _manager(topo: Topology, fab: Fabric) -> JobManager:
    return job_manager(topo, fab)


def _admitted(server: DoubleServer, job: int) -> set[tuple[int, int]]:
    """(ingress port, child index) pairs the switch admits for `job`, read from what it holds."""
    out = set()
    for te in server.servicer.tables.values():
        e = HELPER.decode_table_entry(te)
        if e.table.endswith("agg_children"):
            m = dict(e.match)
            if m["hdr.agg.job_id"][0] == job:
                out.add((m["standard_metadata.ingress_port"][0], m["hdr.agg.child"][0]))
    return out


def _snapshot(servers: dict[str, DoubleServer]) -> dict[str, set[bytes]]:
    return {n: {te.SerializeToString(deterministic=True) for te in s.servicer.tables.values()} |
            {g.SerializeToString(deterministic=True) for g in s.servicer.groups.values()}
            for n, s in servers.items()}


def test_same_leaf_spare_takes_the_dead_workers_child_index_and_rank(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    # leaf1 holds h1, h2, h3 on ports 1, 2, 3; h1 is child 0, h2 child 1
    rec = jobs.create(["h1", "h2", "h4"], spares=["h3"])
    assert rec.spares == ["h3"] and _admitted(servers["leaf1"], rec.job_id) == {(1, 0), (2, 1)}
    dead_rank = rec.ranks.index("h1")
    tree_before = rec.tree.to_dict()
    rec = jobs.replace_member(rec.job_id, "h1")  # the spare on h1's leaf is chosen
    # h3 (port 3) is child 0 now, h2 keeps child 1: a fresh numbering by port would have swapped them
    assert _admitted(servers["leaf1"], rec.job_id) == {(3, 0), (2, 1)}
    assert rec.ranks.index("h3") == dead_rank and "h1" not in rec.ranks and len(rec.ranks) == 3
    assert rec.members == ["h3", "h2", "h4"] and rec.spares == []
    w = next(w for w in rec.workers if w["host"] == "h3")
    assert (w["switch"], w["port"], w["child_index"], w["rank"]) == ("leaf1", 3, 0, dead_rank)
    assert rec.tree.root == tree_before["root"] and rec.tree.parent == tree_before["parent"]
    # the multicast group replicates to the spare's port, not the dead worker's
    group = servers["leaf1"].servicer.groups[rec.grants["leaf1"].group]
    assert sorted((r.egress_port, r.instance) for r in group.replicas) == [(2, 1), (3, 0)]
    # what the switches hold is exactly what the record says
    back = jobs.read_back(rec.job_id)
    for sw, texts in rec.installed.items():
        assert len(back[sw]) == len(texts)
    assert rec.replaced[-1]["dead"] == "h1" and rec.replaced[-1]["same_switch"] is True


def test_spare_on_another_leaf_moves_the_tree(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h2"], spares=["h4"])
    assert set(rec.tree.parent) == {"leaf1"}  # both on leaf1: the leaf is the root
    rec = jobs.replace_member(rec.job_id, "h2", "h4")
    assert set(rec.tree.member_switch.items()) == {("h1", "leaf1"), ("h4", "leaf2")}
    assert rec.tree.root.startswith("spine")
    assert _admitted(servers["leaf1"], rec.job_id) == {(1, 0)}
    assert _admitted(servers["leaf2"], rec.job_id) == {(1, 0)}  # h4 is leaf2's first host port
    assert rec.ranks == ["h1", "h4"]
    jobs.delete(rec.job_id)
    assert all(not s.servicer.tables and not s.servicer.groups for s in servers.values())


def test_a_refused_replacement_leaves_the_job_as_it_was(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h2", "h4"], spares=["h3"])
    # something else already holds the admission entry the spare needs on leaf1: that INSERT is refused
    clash = HELPER.table_entry("P4inaIngress.admission.agg_children",
                               {"standard_metadata.ingress_port": 3, "hdr.agg.job_id": rec.job_id,
                                "hdr.agg.child": 0}, "P4inaIngress.admission.admit", {})
    fab.client("leaf1").write([update("INSERT", entity(clash))])
    before = _snapshot(servers)
    saved = rec.to_dict()
    with pytest.raises(RpcError):
        jobs.replace_member(rec.job_id, "h1", "h3")
    assert _snapshot(servers) == before, "a refused replacement must leave every switch as it was"
    assert jobs.get(rec.job_id).to_dict() == saved


def test_replace_refuses_unknown_dead_and_member_spares(fabric: Env) -> None:
    topo, _servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h2"])
    with pytest.raises(JobError, match="no spare"):
        jobs.replace_member(rec.job_id, "h1")
    with pytest.raises(JobError, match="not a member"):
        jobs.replace_member(rec.job_id, "h5", "h3")
    with pytest.raises(JobError, match="already a member"):
        jobs.replace_member(rec.job_id, "h1", "h2")
    with pytest.raises(JobError, match="spare host"):
        jobs.create(["h4", "h5"], spares=["h4"])


def test_a_rebuild_after_a_replacement_keeps_the_spares_child_index(fabric: Env) -> None:
    """A lost spine moves the tree; leaf1's children are the same hosts, so their bits must not move (numbering
    them afresh by port would swap h2 and h3, whose rounds are counted under the old bits)."""
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h2", "h4"], spares=["h3"])
    rec = jobs.replace_member(rec.job_id, "h1", "h3")
    old_root = rec.tree.root
    jobs.state.down_switches.append(old_root)
    rec = jobs.rebuild(rec.job_id)
    assert rec.tree.root != old_root
    assert _admitted(servers["leaf1"], rec.job_id) == {(3, 0), (2, 1)}
    assert {w["host"]: w["child_index"] for w in rec.workers if w["switch"] == "leaf1"} == {"h3": 0, "h2": 1}
