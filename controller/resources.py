"""Per-switch resource pools: aggregation slots (contiguous ranges), multicast group ids and job indices.

Pools are never persisted on their own: they are rebuilt from the jobs the controller state records, so the
bookkeeping cannot drift from what is installed. Admission checks a whole tree before anything is allocated and
refuses with the first shortage it finds, naming the switch, the resource and the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from controller.exceptions import AdmissionError


@dataclass
class RangePool:
    """First-fit allocator of contiguous ranges in [start, start + capacity)."""

    capacity: int
    start: int = 0
    used: list[tuple[int, int]] = field(default_factory=list)  # (base, count), sorted

    def free_count(self) -> int:
        return self.capacity - sum(c for _, c in self.used)

    def largest_free(self) -> int:
        best, cursor = 0, self.start
        for base, count in self.used:
            best = max(best, base - cursor)
            cursor = base + count
        return max(best, self.start + self.capacity - cursor)

    def find(self, count: int) -> int | None:
        cursor = self.start
        for base, used in self.used:
            if base - cursor >= count:
                return cursor
            cursor = base + used
        if self.start + self.capacity - cursor >= count:
            return cursor
        return None

    def take(self, base: int, count: int) -> None:
        end = base + count
        if base < self.start or end > self.start + self.capacity:
            raise AdmissionError(f"range {base}..{end - 1} outside the pool {self.start}..{self.start + self.capacity - 1}")
        for b, c in self.used:
            if base < b + c and b < end:
                raise AdmissionError(f"range {base}..{end - 1} overlaps {b}..{b + c - 1}, already in use")
        self.used.append((base, count))
        self.used.sort()

    def allocate(self, count: int) -> int:
        base = self.find(count)
        if base is None:
            raise AdmissionError(f"no {count} contiguous free entries (largest free run {self.largest_free()})")
        self.take(base, count)
        return base

    def release(self, base: int, count: int) -> None:
        self.used.remove((base, count))


@dataclass
class SwitchResources:
    """What one switch can lend to jobs."""

    switch: str
    slots: RangePool
    groups: RangePool
    indices: RangePool  # per-switch job indices (rows of the per-job counters)
    job_ids: set[int] = field(default_factory=set)

    @classmethod
    def create(cls, switch: str, slots: int, groups: int, jobs: int, first_group: int = 1) -> SwitchResources:
        return cls(switch, RangePool(slots), RangePool(groups, first_group), RangePool(jobs))


@dataclass(frozen=True)
class Grant:
    """What one job holds on one switch."""

    switch: str
    slot_base: int
    slot_count: int
    group: int
    job_idx: int = 0


class ResourceBook:
    """The pools of every switch; `admit` either grants a whole tree or refuses without side effects."""

    def __init__(self, pools: Iterable[SwitchResources]) -> None:
        self.pools = {p.switch: p for p in pools}

    def admit(self, job_id: int, switches: Iterable[str], slots: int) -> dict[str, Grant]:
        switches = sorted(switches)
        for sw in switches:
            pool = self.pools[sw]
            if pool.indices.find(1) is None:
                raise AdmissionError(f"job {job_id} refused: switch {sw} already serves {len(pool.job_ids)} jobs, "
                                     f"the most it can hold")
            if pool.slots.find(slots) is None:
                raise AdmissionError(f"job {job_id} refused: switch {sw} has {pool.slots.free_count()} free slots "
                                     f"(largest contiguous run {pool.slots.largest_free()}), the job needs {slots}")
            if pool.groups.find(1) is None:
                raise AdmissionError(f"job {job_id} refused: switch {sw} has no free multicast group "
                                     f"({pool.groups.capacity} in use)")
        grants = {}
        for sw in switches:
            pool = self.pools[sw]
            grants[sw] = Grant(sw, pool.slots.allocate(slots), slots, pool.groups.allocate(1),
                               pool.indices.allocate(1))
            pool.job_ids.add(job_id)
        return grants

    def restore(self, job_id: int, grants: Iterable[Grant]) -> None:
        """Re-take what a persisted job holds (when loading state)."""
        for g in grants:
            pool = self.pools[g.switch]
            pool.slots.take(g.slot_base, g.slot_count)
            pool.groups.take(g.group, 1)
            pool.indices.take(g.job_idx, 1)
            pool.job_ids.add(job_id)

    def release(self, job_id: int, grants: Iterable[Grant]) -> None:
        for g in grants:
            pool = self.pools.get(g.switch)
            if pool is None:
                continue
            pool.slots.release(g.slot_base, g.slot_count)
            pool.groups.release(g.group, 1)
            pool.indices.release(g.job_idx, 1)
            pool.job_ids.discard(job_id)
