"""A hot-standby worker takes over a dead worker's child index mid-collective (docs/controller.md, "Spares and
replacement"; docs/protocol.md, "Slots and versions").

Leaf-spine as in test_aggregation_rebuild: 2 leaves x 2 workers under spine1, a spare wired to leaf1 port 5. Mid-step
one of leaf1's workers dies (every frame to or from it is lost from then on). leaf1's entries change as
`JobManager.replace_member` changes them (the controller's own entity builder and diff): the spare's port is admitted
with the dead worker's child index, the multicast group and neighbour entry follow. The spare starts the step again
from chunk 0 with the dead worker's data (its checkpoint). Where the dead worker's contribution already counted, the
switch's bitmap has that child's bit set: the spare's packet is a duplicate (answered with the stored RESULT, or
dropped until the slot completes); where it did not, the spare's packet is added. The switch forgets the dead
worker's part in a round once it joined the slot's next one, so the spare starts each slot where
`controller.standby.resume_points` says, from leaf1's cells. Every survivor's result, and every result the spare
gets, must equal the sum over the four ranks' data, each counted once (RESULT count 4)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest
from aggnet import (
    DROP_NOT_ADMITTED,
    ING,
    AggSwitch,
    Fabric,
    InFlight,
    Neighbor,
    SimWorker,
    ip_str,
    mac_str,
    running_fabric,
)
from test_aggregation_rebuild import JOB, UP1, leaf_spine

from controller.standby import REGISTERS, STATUS_USED, Cell, resume_points
from hostagent import protocol as proto

SPARE_PORT = 5


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    yield from running_fabric()


def leaf1_entities(leaf: AggSwitch, spine: AggSwitch, pool: int, children: dict[int, tuple[int, str, Neighbor]]
                   ) -> list:
    """leaf1's job entities for `children` (port -> (index, name, who)), built by the controller's builder."""
    from controller.plan import Child, SwitchJobPlan
    from controller.program import switch_job_entities

    kids = tuple(Child(port=p, index=i, name=n, is_host=True, ip=ip_str(w.ip), mac=mac_str(w.mac),
                       udp_port=w.udp_port) for p, (i, n, w) in sorted(children.items()))
    plan = SwitchJobPlan(job_id=JOB, switch="leaf1", role="leaf", is_root=False, slot_base=0, slot_count=pool,
                         group=1, quant="int32", children=kids, parent="spine1", parent_port=UP1,
                         index_at_parent=0)
    return switch_job_entities(leaf.helper, plan, my_mac=mac_str(leaf.mac), my_ip=ip_str(leaf.ip),
                               parent_mac=mac_str(spine.mac), parent_ip=ip_str(spine.ip))


@dataclass
class SpareSim(SimWorker):
    """A spare: each slot starts at `starts[slot]`; the chunks before it were finished by the dead worker."""

    starts: list[int] = field(default_factory=list)

    @property
    def skipped(self) -> set[int]:
        return {k for k in range(len(self.chunks)) if k < self.starts[k % self.pool]}

    def start(self) -> list[bytes]:
        first = [k for k in self.starts if k < len(self.chunks)]
        for k in first:
            self.outstanding[k % self.pool] = k
        return [self.frame(k) for k in first]

    @property
    def done(self) -> bool:
        return len(self.results) + len(self.skipped) == len(self.chunks)


def leaf_cells(leaf: AggSwitch, child: int, pool: int) -> list[tuple[Cell, Cell]]:
    """leaf1's cells of the job (slot base 0), as `controller.standby.read_cells` reads them over P4Runtime."""
    def cell(c: int) -> Cell:
        reg = {n: leaf.read_register(f"{ING}.aggregation.{n}", c) for n in REGISTERS}
        return Cell(bool(reg["agg_bitmap"] >> child & 1), reg["agg_round_step"], reg["agg_round_seq"],
                    bool(reg["agg_status"] & STATUS_USED))
    return [(cell(2 * s), cell(2 * s + 1)) for s in range(pool)]


class WorkerDies:
    """Fate of each frame: once `dead` holds `after` results it dies; leaf1 is reprogrammed and the spare starts."""

    def __init__(self, fabric: Fabric, workers: list[SimWorker], dead: SimWorker, pool: int, after: int) -> None:
        self.fabric, self.workers, self.dead, self.pool, self.after = fabric, workers, dead, pool, after
        self.spare: SimWorker | None = None
        self.updates = 0

    def __call__(self, n: int, item: InFlight) -> str:
        d = self.dead.name
        if self.spare is None and len(self.dead.results) >= self.after:
            self.replace()
        if self.spare is not None and (item.target == d or item.origin == d):
            return "drop"  # the dead worker's frames still in flight, and anything sent to it
        return "deliver"

    def replace(self) -> None:
        from controller.jobs import diff_updates
        from p4switch.runtime.entries import DELETE, INSERT, MODIFY

        fabric, dead = self.fabric, self.dead
        leaf, spine = fabric.switches["leaf1"], fabric.switches["spine1"]
        spare = SpareSim(name="spare", rank=dead.rank, child=dead.child, job_id=JOB, pool=self.pool,
                         chunks=[c.copy() for c in dead.chunks])  # the dead rank's data, from its checkpoint
        before = {p: (w.child, w.name, w.neighbor()) for w in self.workers if fabric.worker_port[w.name][0] == "leaf1"
                  for p in [fabric.worker_port[w.name][1]]}
        fabric.attach_worker(spare, "leaf1", SPARE_PORT)
        dead_port = fabric.worker_port[dead.name][1]
        after = {p: v for p, v in before.items() if p != dead_port}
        after[SPARE_PORT] = (dead.child, spare.name, spare.neighbor())
        kinds = {"INSERT": INSERT, "MODIFY": MODIFY, "DELETE": DELETE}
        from p4.v1 import p4runtime_pb2

        for u in diff_updates(leaf1_entities(leaf, spine, self.pool, before),
                              leaf1_entities(leaf, spine, self.pool, after)):
            leaf._write(kinds[p4runtime_pb2.Update.Type.Name(u.type)], u.entity)
            self.updates += 1
        del fabric.workers[dead.name]
        spare.starts = resume_points(leaf_cells(leaf, dead.child, self.pool), dead.step, self.pool)
        self.spare = spare
        fabric.send_from_worker(spare.name, spare.start())


@pytest.mark.parametrize(("dead_index", "after", "chunks"), [(0, 1, 8), (1, 3, 8), (1, 5, 8), (0, 7, 8), (1, 6, 16)])
def test_spare_takes_the_dead_workers_child_index_mid_step(fabric: Fabric, dead_index: int, after: int,
                                                           chunks: int) -> None:
    pool = 4
    workers = leaf_spine(fabric, pool, chunks=chunks)
    dead = workers[dead_index]
    expected = [np.sum([w.chunks[k].astype(np.int64) for w in workers], axis=0) for k in range(chunks)]
    fate = WorkerDies(fabric, workers, dead, pool, after)
    fabric.run(fate=fate)
    assert fate.spare is not None and fate.updates > 0
    assert not dead.done, "the worker died mid-step"
    # what the spare skips is exactly what the dead worker had finished, and it gets every other chunk
    assert fate.spare.skipped <= set(dead.results), (fate.spare.skipped, sorted(dead.results))
    assert set(fate.spare.results) == set(range(chunks)) - fate.spare.skipped
    for w in [*(w for w in workers if w is not dead), fate.spare]:
        assert w.done and w.bad_checksums == 0, w.name
        for k in sorted(w.results):
            r = w.results[k]
            assert r.count == 4, f"{w.name} chunk {k}: {r.count} contributions"
            assert np.array_equal(r.values, expected[k]), f"{w.name} chunk {k}"
            assert r.fmt == proto.FMT_INT32 and not r.flags & proto.FLAG_OVERFLOW


def test_a_spare_with_a_new_child_index_is_not_the_same_child(fabric: Fabric) -> None:
    """Control: the spare's packets carry a child index leaf1 does not admit on its port: all dropped, nothing
    added (so the exact sums above come from the kept index, not from the spare's data alone)."""
    pool = 4
    workers = leaf_spine(fabric, pool, chunks=8)
    fate = WorkerDies(fabric, workers, workers[1], pool, 3)
    fate.replace()
    assert fate.spare is not None
    fate.spare.child = 0  # h1's bit: the admission entry for (port 5, child 0) does not exist
    leaf = fabric.switches["leaf1"]
    fabric.in_flight.clear()
    fabric.send_from_worker("spare", fate.spare.start())
    while fabric.in_flight:
        fabric.deliver(fabric.in_flight.pop(0))
    assert not fate.spare.results
    assert leaf.drops(0, DROP_NOT_ADMITTED) == len(fate.spare.starts)
