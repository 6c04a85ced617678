"""Jobs installed on loopback P4Runtime doubles: entries read back as intended, delete leaves nothing,
admission refuses cleanly, a failed switch aborts the install everywhere, a lost spine moves the tree."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from controller_p4rt_double import DoubleServer
from controller_program_p4info import documented_p4info
from doubled_fabric import Env, doubled_leaf_spine, job_manager

from controller.client import entity, update
from controller.exceptions import AdmissionError, RpcError, SwitchUnavailableError
from controller.fabric import Fabric
from controller.jobs import JobManager, from_text
from controller.p4info import P4InfoHelper
from controller.topology import Topology


@pytest.fixture
def fabric() -> Iterator[Env]:
    with doubled_leaf_spine(hosts_per_leaf=2) as env:
        yield env


def _manager(topo: Topology, fab: Fabric) -> JobManager:
    return job_manager(topo, fab)


def _held(servers: dict[str, DoubleServer]) -> dict[str, int]:
    return {n: len(s.servicer.tables) + len(s.servicer.groups) for n, s in servers.items()}


def test_create_reads_back_as_intended_and_delete_leaves_nothing(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h2", "h3", "h4"], slots=64)
    assert rec.tree.root.startswith("spine") and set(rec.tree.switches) == {"leaf1", "leaf2", rec.tree.root}
    back = jobs.read_back(rec.job_id)
    for sw, texts in rec.installed.items():
        intended = [from_text(t) for t in texts]
        assert len(back[sw]) == len(intended)
        assert sorted(e.SerializeToString(deterministic=True) for e in back[sw]) == \
            sorted(e.SerializeToString(deterministic=True) for e in intended)
    # the documented example: leaves admit their two workers as children 0 and 1 and point at the spine
    helper = P4InfoHelper(documented_p4info())
    leaf1 = [helper.decode_table_entry(from_text(t).table_entry) for t in rec.installed["leaf1"]
             if from_text(t).HasField("table_entry")]
    job_row = next(e for e in leaf1 if e.table == "P4inaIngress.admission.job")
    params = dict(job_row.params)
    assert job_row.action == "P4inaIngress.admission.set_job_member"
    assert params["children"] == 2 and params["slot_count"] == 64 and params["parent_port"] == 3
    admits = sorted(dict(e.match)["hdr.agg.child"][0] for e in leaf1 if e.table.endswith("agg_children"))
    assert admits == [0, 1]
    assert [(w["host"], w["rank"], w["switch"], w["child_index"]) for w in rec.workers] == [
        ("h1", 0, "leaf1", 0), ("h2", 1, "leaf1", 1), ("h3", 2, "leaf2", 0), ("h4", 3, "leaf2", 1)]
    assert _held(servers)[rec.tree.root] > 0 and all(v == 0 for k, v in _held(servers).items()
                                                    if k not in rec.tree.parent)
    jobs.delete(rec.job_id)
    assert all(v == 0 for v in _held(servers).values())
    assert not jobs.state.jobs


def test_admission_refuses_when_slots_run_out(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    first = jobs.create(["h1", "h3"], slots=400)
    before = _held(servers)
    with pytest.raises(AdmissionError, match=r"switch leaf\d has 112 free slots .* the job needs 200"):
        jobs.create(["h2", "h4"], slots=200)
    assert _held(servers) == before, "a refused job must install nothing"
    second = jobs.create(["h2", "h4"], slots=112)
    assert second.grants["leaf1"].slot_base == 400
    assert first.tree.root != second.tree.root, "the second job takes the other spine"


def test_job_indices_run_out_before_the_counters_overflow(fabric: Env) -> None:
    topo, _, fab = fabric
    jobs = _manager(topo, fab)
    for _ in range(16):
        jobs.create(["h1", "h2"], slots=1)
    with pytest.raises(AdmissionError, match="leaf1 already serves 16 jobs"):
        jobs.create(["h1", "h2"], slots=1)


def test_unreachable_switch_aborts_the_install_everywhere(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    fab.client("leaf2").close()
    servers["leaf2"].stop()
    with pytest.raises(SwitchUnavailableError, match="leaf2"):
        jobs.create(["h1", "h3"], slots=8)
    assert all(v == 0 for k, v in _held(servers).items() if k != "leaf2")
    assert not jobs.state.jobs


def test_rebuild_moves_the_tree_off_a_lost_spine(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h3"], slots=8)
    lost = rec.tree.root
    fab.client(lost).close()
    servers[lost].stop()
    jobs.state.down_switches.append(lost)
    assert jobs.affected(switch=lost) == [rec.job_id]
    again = jobs.rebuild(rec.job_id)
    assert again.tree.root != lost and lost not in again.installed
    back = jobs.read_back(rec.job_id)
    assert {sw: len(v) for sw, v in back.items()} == {sw: len(v) for sw, v in again.installed.items()}


def test_a_refused_update_never_deletes_what_it_collided_with(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    # someone else's entry sits where job 1 wants its `job` row on leaf1
    foreign = P4InfoHelper(documented_p4info()).table_entry(
        "P4inaIngress.admission.job", {"hdr.agg.job_id": 1}, "P4inaIngress.admission.set_job_root",
        {"job_idx": 9, "slot_base": 0, "slot_count": 1, "children": 1, "mcast_grp": 9, "scale": 0, "result_fmt": 0})
    fab.connected("leaf1").write([update("INSERT", entity(foreign))])
    with pytest.raises(RpcError, match="ALREADY_EXISTS"):
        jobs.create(["h1", "h3"], slots=4)
    held = _held(servers)
    assert held["leaf1"] == 1, "only the foreign entry is left on leaf1"
    assert all(v == 0 for k, v in held.items() if k != "leaf1")
