"""A new job on the slots of a deleted job aggregates from a clean slate.

The slot state registers of p4src/p4ina.p4 keep the round (step, seq) and status of the last use of every cell.
Workers of a new job start again at step 0 with version 0: without a reset, the switch takes their packets for
stale ones (the deleted job got further) or, worse, for retransmissions of a round it already completed, and
answers with the deleted job's stored RESULT. The controller therefore clears the granted slots' state when it
creates a job and when a rebuild grants slots on a switch (docs/controller.md, "Jobs").

Set-up as in test_controller_allreduce: compiled p4ina.p4 on four embedded switches (leaf-spine 2x2), P4Runtime
on loopback, in-process links, four host agents (hostagent.Worker).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_controller_allreduce import (
    POOL,
    Fabric,
    _compile,
    _run_all,
    codec_mod,
    kill_switch,
    start_fabric,
    transport_mod,
    worker_mod,
)

from controller.app import ControllerApp
from controller.p4info import P4InfoHelper
from controller.program import SLOT_REGISTERS
from controller.state import JobRecord
from controller.topologies import leaf_spine

HOSTS = ["h1", "h2", "h3", "h4"]
CHUNK = 64  # int32 values per packet


@pytest.fixture
def fabric(tmp_path: Path) -> Iterator[tuple[Fabric, ControllerApp]]:
    fab = Fabric(leaf_spine(leaves=2, spines=2, hosts_per_leaf=2))
    try:
        yield fab, start_fabric(fab, tmp_path)
    finally:
        fab.close()


def _workers(fab: Fabric, rec: JobRecord, *, max_retries: int = 30) -> list[Any]:
    """Fresh host agents for a job (step 0, every slot at version 0), as `p4ina run` starts them per job, on fresh
    host ports (the previous job's workers are gone).

    A healthy all-reduce needs no retransmission at all; 30 (about 30 s for one chunk) give a loaded machine
    ample slack while a stuck job still fails in well under a minute instead of hanging for minutes."""
    for leaf in ("leaf1", "leaf2"):
        fab.ports[leaf] = transport_mod.SwitchPorts(fab.switches[leaf])
    workers = []
    for w in rec.workers:
        host = fab.topo.hosts[w["host"]]
        leaf_ip, leaf_mac = fab.topo.switch_address(host.switch)
        ep = codec_mod.Endpoints(src_mac=host.mac, dst_mac=leaf_mac, src_ip=host.ip, dst_ip=leaf_ip,
                                 udp_port=48864)
        transport = fab.ports[host.switch].attach(host.port, 48864)
        workers.append(worker_mod.Worker(rec.job_id, w["rank"], n_workers=len(rec.workers),
                                         child=w["child_index"], transport=transport, endpoints=ep,
                                         pool_size=POOL, timeout=0.2, max_timeout=1.0, max_retries=max_retries))
    return workers


def _close(workers: list[Any]) -> None:
    for w in workers:
        w.close()


def _allreduce(workers: list[Any], rng: np.random.Generator, size: int) -> None:
    """One collective with fresh random tensors; every worker must get the exact sum."""
    data = [rng.integers(-(2**24), 2**24, size=size, dtype=np.int32) for _ in workers]
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    for w, out in zip(workers, _run_all(workers, lambda w: w.allreduce(data[w.rank])), strict=True):
        assert np.array_equal(out, exact), f"job {w.job} rank {w.rank}: not the exact sum"


def _run_job(fab: Fabric, app: ControllerApp, rounds: int, size: int, seed: int, **create: Any) -> JobRecord:
    """Create a job on all four hosts, all-reduce `rounds` times, stop its workers, delete it."""
    with app.session() as s:
        rec = s.jobs.create(HOSTS, slots=POOL, **create)
    workers = _workers(fab, rec)
    rng = np.random.default_rng(seed)
    try:
        for _ in range(rounds):
            _allreduce(workers, rng, size)
    finally:
        _close(workers)
    with app.session() as s:
        s.jobs.delete(rec.job_id)
    return rec


def _next_job(fab: Fabric, app: ControllerApp, previous: JobRecord, seed: int, size: int,
              **create: Any) -> tuple[JobRecord, list[Any]]:
    with app.session() as s:
        rec = s.jobs.create(HOSTS, slots=POOL, **create)
    shared = set(rec.grants) & set(previous.grants)
    assert {"leaf1", "leaf2"} <= shared
    assert all((rec.grants[sw].slot_base, rec.grants[sw].slot_count) ==
               (previous.grants[sw].slot_base, previous.grants[sw].slot_count) for sw in shared), \
        "the new job must land on the deleted job's slots"
    workers = _workers(fab, rec)
    try:
        started = time.monotonic()
        _allreduce(workers, np.random.default_rng(seed), size)
        print(f"\njob {rec.job_id} after job {previous.job_id}: exact in {time.monotonic() - started:.2f} s, "
              f"{sum(w.stats.retransmissions for w in workers)} retransmissions")
    except BaseException:
        _close(workers)
        raise
    return rec, workers


@pytest.mark.parametrize("same_id", [False, True], ids=["new-job-id", "same-job-id"])
def test_next_job_on_a_deleted_jobs_slots_gets_its_sum(fabric: tuple[Fabric, ControllerApp], same_id: bool) -> None:
    """The reported hang: job A ran several all-reduces (steps 0..2, every slot used several times); job B's
    workers start at step 0 on the same slots."""
    fab, app = fabric
    a = _run_job(fab, app, rounds=3, size=CHUNK * POOL * 3, seed=1)
    b, workers = _next_job(fab, app, a, seed=2, size=CHUNK * POOL * 2,
                           job_id=a.job_id if same_id else a.job_id + 1)
    try:
        assert (b.job_id == a.job_id) is same_id
        _allreduce(workers, np.random.default_rng(3), CHUNK * 5)  # and it goes on working
    finally:
        _close(workers)


def test_next_job_never_gets_the_deleted_jobs_result(fabric: tuple[Fabric, ControllerApp]) -> None:
    """Job A's one all-reduce filled the slots with completed rounds of step 0; job B's identical (step, seq,
    version) must start new rounds, not be answered with A's stored RESULTs."""
    fab, app = fabric
    size = CHUNK * POOL
    a = _run_job(fab, app, rounds=1, size=size, seed=4)
    _, workers = _next_job(fab, app, a, seed=5, size=size, job_id=a.job_id + 1)
    _close(workers)


def test_rebuild_onto_a_deleted_jobs_slots(fabric: tuple[Fabric, ControllerApp]) -> None:
    """A rebuild grants slots on a switch new to the tree: they must be cleared as on create. Job A ran on spine1
    and was deleted; job B runs on spine2; spine2 dies and B moves to spine1, onto A's old slots."""
    fab, app = fabric
    a = _run_job(fab, app, rounds=3, size=CHUNK * POOL * 3, seed=6, root="spine1")
    assert a.tree.root == "spine1"
    b, workers = _next_job(fab, app, a, seed=7, size=CHUNK * 8, root="spine2", job_id=a.job_id + 1)
    try:
        events = kill_switch(fab, app, "spine2")
        with app.session() as s:
            moved = s.state.jobs[b.job_id]
        assert any(e.kind == "job_rebuilt" for e in events)
        assert moved.tree.root == "spine1" and moved.grants["spine1"].slot_base == a.grants["spine1"].slot_base
        _allreduce(workers, np.random.default_rng(8), CHUNK * POOL * 2)
    finally:
        _close(workers)


# Every per-cell register of p4src/include/aggregation.p4 besides the 64 values. The controller clears only
# `SLOT_REGISTERS` (controller/program.py says why the others need no reset); a register added to the slot state
# must be judged there, so this list is checked against the compiled program.
PER_CELL_STATE = {f"P4inaIngress.aggregation.{n}" for n in (
    "agg_bitmap", "agg_child_count", "agg_round_step", "agg_round_seq", "agg_contributions", "agg_checksum",
    "agg_status")}


def test_the_reset_is_judged_against_every_per_cell_register() -> None:
    helper = P4InfoHelper(_compile().p4info)
    cells = helper.registers.get(SLOT_REGISTERS[0]).size
    per_cell = {r.preamble.name for r in helper.p4info.registers if r.size == cells}
    values = {n for n in per_cell if re.fullmatch(r".*\.agg_v\d+", n)}
    assert len(values) == CHUNK
    assert per_cell - values == PER_CELL_STATE, "slot state changed: re-judge controller/program.py SLOT_REGISTERS"
    assert set(SLOT_REGISTERS) <= PER_CELL_STATE
