"""Recovery of in-flight collectives when the controller moves a job's tree (docs/protocol.md, "Tree rebuilds").

A leaf-spine (2 leaves x 2 workers, spines 1 and 2, both leaves wired to both spines) runs a job rooted at spine1.
Mid-collective spine1 dies (every frame to or from it is lost) and the job's entries move to spine2 as a rebuild
does: the leaves' `job` entries are MODIFIED to the new parent port and spine2 gets the root's entries.

1. A leaf's partial sum went up and was lost: the leaf's slot is complete but unanswered. The workers' RETX makes
   the leaf resend its stored partial to its CURRENT parent, so the new root completes the slot.
2. The old root's RESULT reached leaf1 but not leaf2: leaf1's workers moved on to the slot's next round. The new
   root, receiving leaf1's next-round partial while the old round is incomplete, PULLs the old RESULT from leaf1
   (kept in the slot's other version) and adopts it as the round's RESULT for everyone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from aggnet import (
    DROP_DUPLICATE,
    EGR,
    ING,
    AggSwitch,
    Fabric,
    InFlight,
    JobOnSwitch,
    install_job,
    make_workers,
    parse_result,
    running_fabric,
)
from test_aggregation_trees import assert_exact

from hostagent import protocol as proto

JOB = 1
UP1, UP2 = 3, 4  # a leaf's ports towards spine1 and spine2 (workers on 1 and 2)


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    yield from running_fabric()


def leaf_spine(fabric: Fabric, pool: int, chunks: int, result_fmt: int = proto.FMT_INT32) -> list:
    """The job on leaf1/leaf2 under spine1; spine2 is wired but holds nothing yet."""
    workers = make_workers(4, chunks=chunks, pool=pool, seed=7)
    leaves = [fabric.add_switch(n) for n in ("leaf1", "leaf2")]
    spines = [fabric.add_switch(n) for n in ("spine1", "spine2")]
    for i, leaf in enumerate(leaves):
        fabric.connect(leaf.name, UP1, "spine1", i + 1)
        fabric.connect(leaf.name, UP2, "spine2", i + 1)
        children = {}
        for j, w in enumerate(workers[2 * i:2 * i + 2]):
            w.child = j
            fabric.attach_worker(w, leaf.name, j + 1)
            children[j + 1] = (j, w.neighbor())
        install_job(leaf, JobOnSwitch(job_id=JOB, job_idx=0, slot_count=pool, children=children, mcast_grp=1,
                                      parent=(UP1, i, spines[0].neighbor())))
    install_root(spines[0], leaves, pool, result_fmt)
    return workers


def install_root(spine: AggSwitch, leaves: list[AggSwitch], pool: int, result_fmt: int) -> None:
    children = {i + 1: (i, leaf.neighbor()) for i, leaf in enumerate(leaves)}
    install_job(spine, JobOnSwitch(job_id=JOB, job_idx=0, slot_count=pool, children=children, mcast_grp=1,
                                   result_fmt=result_fmt))


def rebuild_on_spine2(fabric: Fabric, pool: int, result_fmt: int = proto.FMT_INT32) -> None:
    """What the controller's rebuild writes: MODIFY the leaves' `job` entries, entries for spine2 as the root."""
    leaves = [fabric.switches["leaf1"], fabric.switches["leaf2"]]
    spine2 = fabric.switches["spine2"]
    for i, leaf in enumerate(leaves):
        leaf.modify(leaf.names.table_entry(
            f"{ING}.admission.job", {"hdr.agg.job_id": JOB}, f"{ING}.admission.set_job_member",
            {"job_idx": 0, "slot_base": 0, "slot_count": pool, "children": 2, "mcast_grp": 1, "scale": 0,
             "parent_port": UP2, "my_index": i}))
        s = spine2.neighbor()
        leaf.add_entry(f"{EGR}.agg_rewrite.agg_neighbors", {"hdr.agg.job_id": JOB,
                                                             "standard_metadata.egress_port": UP2},
                       f"{EGR}.agg_rewrite.set_neighbor", src_mac=leaf.mac, dst_mac=s.mac, src_addr=leaf.ip,
                       dst_addr=s.ip, dst_port=s.udp_port)
    install_root(spine2, leaves, pool, result_fmt)


class SpineDies:
    """Fate of each frame: once `trigger` picks a frame (which is lost), spine1 is dead and the tree moves."""

    def __init__(self, fabric: Fabric, pool: int, trigger: Callable[[InFlight], bool],
                 result_fmt: int = proto.FMT_INT32) -> None:
        self.fabric, self.pool, self.trigger, self.result_fmt = fabric, pool, trigger, result_fmt
        self.dead = False
        self.pulls = 0  # PULL requests going down
        self.answers = 0  # RESULT | PULL going up

    def __call__(self, n: int, item: InFlight) -> str:
        flags = pull_flags(item)
        self.pulls += flags == proto.FLAG_PULL
        self.answers += flags == proto.FLAG_PULL | proto.FLAG_RESULT
        if self.dead:
            return "drop" if "spine1" in (item.target, item.origin.split(":")[0]) else "deliver"
        if self.trigger(item):
            self.dead = True
            rebuild_on_spine2(self.fabric, self.pool, self.result_fmt)
            return "drop"
        return "deliver"


def pull_flags(item: InFlight) -> int:
    return int(item.frame[proto.AGG_OFFSET + proto.OFF_FMT_FLAGS]) & (proto.FLAG_PULL | proto.FLAG_RESULT)


def partial_from(leaf: str, seq: int) -> Callable[[InFlight], bool]:
    def pick(item: InFlight) -> bool:
        return item.origin == f"{leaf}:{UP1}" and parse_result(item.frame).seq == seq

    return pick


def result_to(leaf: str, seq: int) -> Callable[[InFlight], bool]:
    def pick(item: InFlight) -> bool:
        return (item.origin.startswith("spine1:") and item.target == leaf
                and parse_result(item.frame).seq == seq)

    return pick


@pytest.mark.parametrize("leaf", ["leaf1", "leaf2"])
def test_lost_partial_is_resent_to_the_new_parent(fabric: Fabric, leaf: str) -> None:
    pool = 4
    workers = leaf_spine(fabric, pool, chunks=12)
    fate = SpineDies(fabric, pool, partial_from(leaf, 5))
    silences = fabric.run(fate=fate)
    assert fate.dead, "the partial sum of chunk 5 never went up"
    assert_exact(workers)
    assert silences >= 1
    spine2 = fabric.switches["spine2"]
    # spine2 completed the stuck slots from resent partials: nothing was counted twice on the way
    assert spine2.counter(f"{ING}.output.agg_packets", 0) > 0


def test_result_that_reached_one_leaf_only_is_pulled_from_it(fabric: Fabric) -> None:
    pool = 4
    workers = leaf_spine(fabric, pool, chunks=12)
    # spine1's RESULT for chunk 5 reaches leaf1, the copy to leaf2 is lost with spine1
    fate = SpineDies(fabric, pool, result_to("leaf2", 5))
    fabric.run(fate=fate)
    assert fate.dead
    assert_exact(workers)
    # spine2 pulled the round of chunk 5 from leaf1 (the only holder) and adopted leaf1's answer
    assert fate.pulls >= 1 and fate.answers >= 1


@pytest.mark.parametrize("result_fmt", [proto.FMT_INT16, proto.FMT_INT8])
def test_pulled_result_keeps_the_roots_format(fabric: Fabric, result_fmt: int) -> None:
    """A RESULT adopted from a leaf passes down in the format the old root chose, not requantized again."""
    pool = 2
    workers = leaf_spine(fabric, pool, chunks=6, result_fmt=result_fmt)
    fate = SpineDies(fabric, pool, result_to("leaf2", 3), result_fmt)
    fabric.run(fate=fate)
    assert fate.dead
    ref = workers[0].results
    for w in workers:
        assert w.done and w.bad_checksums == 0
        for k in range(6):
            r = w.results[k]
            assert r.fmt == result_fmt and r.count == 4, f"{w.name} chunk {k}"
            assert (r.exp, r.values.tolist()) == (ref[k].exp, ref[k].values.tolist()), f"{w.name} chunk {k}"


def test_no_pull_in_a_healthy_run(fabric: Fabric) -> None:
    """Without a failure no switch ever sees a next round before its RESULT: no PULL, no duplicate."""
    pool = 4
    workers = leaf_spine(fabric, pool, chunks=12)
    seen: list[int] = []

    def watch(n: int, item: InFlight) -> str:
        seen.append(pull_flags(item))
        return "deliver"

    silences = fabric.run(fate=watch)
    assert silences == 0
    assert_exact(workers)
    assert proto.FLAG_PULL not in seen and proto.FLAG_PULL | proto.FLAG_RESULT not in seen
    for name in ("leaf1", "leaf2", "spine1"):
        assert fabric.switches[name].drops(0, DROP_DUPLICATE) == 0


def move_leaves(fabric: Fabric, pool: int, up: int) -> None:
    """MODIFY both leaves' `job` entries to the parent behind port `up` (its neighbour entry is in place)."""
    for i, name in enumerate(("leaf1", "leaf2")):
        leaf = fabric.switches[name]
        leaf.modify(leaf.names.table_entry(
            f"{ING}.admission.job", {"hdr.agg.job_id": JOB}, f"{ING}.admission.set_job_member",
            {"job_idx": 0, "slot_base": 0, "slot_count": pool, "children": 2, "mcast_grp": 1, "scale": 0,
             "parent_port": up, "my_index": i}))


def test_tree_returning_to_a_switch_with_an_abandoned_round(fabric: Fabric) -> None:
    """spine1 keeps an unfinished round of the slot when the tree leaves it; when the tree comes back, the leaves
    are several rounds further. spine1's PULL names its abandoned round; the leaf answers with its later RESULT of
    that version, which spine1 adopts, so the leaves' contributions are accepted again."""
    pool = 1
    workers = leaf_spine(fabric, pool, chunks=8)
    phase = 0

    def fate(n: int, item: InFlight) -> str:
        nonlocal phase
        hdr = parse_result(item.frame)
        if phase == 0 and item.origin == f"leaf2:{UP1}" and hdr.seq == 0:
            phase = 1  # leaf2's first partial is lost; spine1 keeps round 0 with leaf1's partial only
            rebuild_on_spine2(fabric, pool)
            return "drop"
        if phase == 1 and item.origin.startswith("spine2:") and item.target == "leaf2" and hdr.seq == 4:
            phase = 2  # this RESULT still arrives; then spine2 dies and the tree goes back to spine1
            return "deliver"
        if phase == 2:
            phase = 3
            move_leaves(fabric, pool, UP1)
        if phase == 3 and "spine2" in (item.target, item.origin.split(":")[0]):
            return "drop"
        return "deliver"

    fabric.run(fate=fate)
    assert phase == 3
    assert_exact(workers)
