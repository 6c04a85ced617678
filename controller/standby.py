"""Where a hot-standby worker picks up a dead worker's collective: read the dead worker's slots on its switch and
say, per slot, which chunk the spare sends first.

Why: the spare takes the dead worker's child index (`JobManager.replace_member`), so the switch counts its packets as
that child's. But the switch forgets a child's part in a round as soon as that child joins the slot's next round
(its bit in the other version's cell is cleared, docs/protocol.md "Slots and versions"), and a packet for a round
whose bit is clear and which is complete is dropped as stale. Resending the interrupted collective from chunk 0
would therefore stall on rounds the dead worker finished. Per slot, the dead worker's progress is in the cells:

- its bit is set in a cell of the interrupted step: the latest such round is its last contribution there; the spare
  starts with that round (a duplicate: answered with the stored RESULT, or dropped until the round completes);
- no cell of the step has its bit: the slot has at most its first round of the step (a later round needs the dead
  worker's part in the one before), so the spare starts with the slot's first chunk of the step.

Chunks before a slot's start were finished by the dead worker (their RESULTs went to it); the spare cannot get them
from the network again and marks them skipped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from controller.client import SwitchClient
from controller.p4info import P4InfoHelper

STATUS_USED = 0x8  # p4src/include/defines.p4: the cell has held a round
AGG = "P4inaIngress.aggregation"
REGISTERS = ("agg_bitmap", "agg_round_step", "agg_round_seq", "agg_status")


@dataclass(frozen=True)
class Cell:
    """One (slot, version) cell as far as resuming needs it: is the child's bit set, the round, is it used."""

    mine: bool
    step: int
    seq: int
    used: bool

    def as_list(self) -> list[int]:
        return [int(self.mine), self.step, self.seq, int(self.used)]

    @classmethod
    def from_list(cls, v: Sequence[int]) -> Cell:
        return cls(bool(v[0]), int(v[1]), int(v[2]), bool(v[3]))


def resume_points(cells: Sequence[tuple[Cell, Cell]], step: int, pool: int) -> list[int]:
    """Per slot (relative index), the first seq the spare sends in collective `step` (see the module doc)."""
    if len(cells) != pool:
        raise ValueError(f"{len(cells)} slots of cells for a pool of {pool}")
    out = []
    for slot, pair in enumerate(cells):
        in_step = [c for c in pair if c.used and c.step == step]
        mine = [c.seq for c in in_step if c.mine]
        out.append(max(mine) if mine else slot)
    return out


def read_cells(client: SwitchClient, helper: P4InfoHelper, slot_base: int, slot_count: int,
               child: int) -> list[tuple[Cell, Cell]]:
    """The job's cells on one switch (P4Runtime register reads, one Read of every cell wanted)."""
    wanted: list[p4runtime_pb2.Entity] = []
    for name in REGISTERS:
        for cell in range(slot_base * 2, (slot_base + slot_count) * 2):
            e = p4runtime_pb2.Entity()
            e.register_entry.CopyFrom(helper.register_entry(f"{AGG}.{name}", cell))
            wanted.append(e)
    values: dict[tuple[int, int], int] = {}
    for e in client.read(wanted):
        r = e.register_entry
        values[r.register_id, r.index.index] = int.from_bytes(r.data.bitstring, "big")
    ids = [helper.register_entry(f"{AGG}.{name}", 0).register_id for name in REGISTERS]
    pairs = []
    for slot in range(slot_base, slot_base + slot_count):
        pair = []
        for ver in (0, 1):
            bitmap, step, seq, status = (values.get((rid, slot * 2 + ver), 0) for rid in ids)
            pair.append(Cell(bool(bitmap >> child & 1), step, seq, bool(status & STATUS_USED)))
        pairs.append((pair[0], pair[1]))
    return pairs
