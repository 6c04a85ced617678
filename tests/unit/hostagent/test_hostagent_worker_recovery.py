"""Whole workers against the protocol model of a root switch (hostagent_switch_model) under loss: losses are
recovered by later RESULTs far more often than by timers, the sum stays exact (the switch's bitmap drops the
duplicate contributions fast resends create, the worker never accepts a RESULT twice), and without loss nothing is
resent (but for a timer on a descheduled thread)."""

from __future__ import annotations

import threading

import numpy as np
from hostagent_switch_model import SwitchModel

from hostagent.codec import Endpoints
from hostagent.transport import SwitchPorts
from hostagent.worker import Worker

N, JOB, POOL = 4, 9, 16


def _allreduce(model: SwitchModel, data: list[np.ndarray], calls: int, **kw: object) -> tuple[list[Worker], list]:
    ports = SwitchPorts(model)
    workers = [Worker(JOB, r, n_workers=N, transport=ports.attach(r + 1, 41000 + r),
                      endpoints=Endpoints(udp_port=41000 + r), pool_size=POOL, timeout=0.2, max_retries=40,
                      **kw)  # type: ignore[arg-type]
               for r in range(N)]
    out: list = [[] for _ in range(N)]
    errors: list[BaseException] = []

    def go(r: int) -> None:
        try:
            for _ in range(calls):
                out[r].append(workers[r].allreduce(data[r]))
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(r,)) for r in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    return workers, out


def _data(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    return [rng.integers(-(2**26), 2**26, size=size, dtype=np.int32) for _ in range(N)]


def test_losses_are_resent_by_later_results_and_the_sum_stays_exact() -> None:
    data = _data(64 * 400)
    model = SwitchModel(job=JOB, n_children=N, ports=[1, 2, 3, 4], pool_size=POOL, loss=0.02, dup=0.01, seed=5)
    workers, out = _allreduce(model, data, calls=2)
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    assert all(np.array_equal(o, exact) for per_worker in out for o in per_worker)
    fast = sum(w.stats.fast_retransmissions for w in workers)
    timer = sum(w.stats.timer_retransmissions for w in workers)
    assert model.counters["lost"] > 50
    # every lost DATA or RESULT in the middle of a call is found by a later RESULT; only tails need the timer
    assert fast > 2 * timer, (fast, timer)
    probes = sum(w.stats.probes for w in workers)
    assert sum(w.stats.retransmissions for w in workers) == fast + timer + probes
    assert model.counters["duplicate"] + model.counters["answered_retx"] > 0  # resends met contributions it had
    # random loss (2% per packet: a few chunks of a round trip) is resent without halving for each loss
    assert all(w.stats.tolerated_losses > w.stats.loss_decreases for w in workers)
    assert all(w.stats.window >= 8 for w in workers)  # the floor that keeps RACK working under random loss


def test_no_loss_no_resend_and_the_window_opens_to_the_pool() -> None:
    data = _data(64 * 300)
    model = SwitchModel(job=JOB, n_children=N, ports=[1, 2, 3, 4], pool_size=POOL)
    workers, out = _allreduce(model, data, calls=1)
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    assert all(np.array_equal(o[0], exact) for o in out)
    # no loss: a resend can only be a timer firing on a descheduled thread (four workers share the GIL here)
    chunks = sum(w.stats.chunks for w in workers)
    assert sum(w.stats.retransmissions for w in workers) <= 0.01 * chunks
    assert sum(w.stats.fast_retransmissions for w in workers) == 0  # in-order delivery: nothing is overtaken
    assert any(w.stats.window == POOL for w in workers)
