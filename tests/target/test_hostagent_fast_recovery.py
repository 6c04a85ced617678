"""Issue 18: host agents recover losses through p4src/p4ina.p4 on the embedded switch without waiting for timers.

Four `hostagent.Worker`s in threads on the switch's ports (the in-process transport), the job installed with the
aggregation tests' harness (aggnet.py), 2% loss on every worker link in both directions (the ports' seeded
impairments). A lost contribution or RESULT is found by the RESULT of a chunk sent after it (RACK) and resent at
once: the test counts those fast resends against timer expiries. The sums stay exact, so the switch's bitmap and
versions dropped every duplicate contribution the fast resends created and no worker accepted a RESULT twice."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from aggnet import AggSwitch, JobOnSwitch, Neighbor, compiled_program, install_job, ip_str, mac_str

from hostagent.codec import Endpoints
from hostagent.transport import SwitchPorts
from hostagent.worker import Worker

N, JOB, POOL = 4, 11, 32


@pytest.fixture
def fabric() -> Iterator[tuple[AggSwitch, list[Worker]]]:
    compiled_program()
    sw = AggSwitch("s1", 0, lambda _name, _port, _frame: None)
    ports = SwitchPorts(sw.switch)
    children: dict[int, tuple[int, Neighbor]] = {}
    workers = []
    for r in range(N):
        who = Neighbor(mac=0x02_00_00_00_00_20 + r, ip=0x0A_00_00_20 + r, udp_port=42000 + r)
        children[r + 1] = (r, who)
        ep = Endpoints(src_mac=mac_str(who.mac), dst_mac=mac_str(sw.mac), src_ip=ip_str(who.ip),
                       dst_ip=ip_str(sw.ip), udp_port=who.udp_port)
        workers.append(Worker(JOB, r, n_workers=N, child=r, transport=ports.attach(r + 1, who.udp_port),
                              endpoints=ep, pool_size=POOL, timeout=0.2, max_retries=40))
    install_job(sw, JobOnSwitch(job_id=JOB, job_idx=0, slot_count=POOL, children=children, mcast_grp=1))
    yield sw, workers
    sw.stop()


def _run_all(workers: list[Worker], fn: Callable[[Worker], Any]) -> list[Any]:
    out: list[Any] = [None] * len(workers)
    errors: list[BaseException] = []

    def go(i: int) -> None:
        try:
            out[i] = fn(workers[i])
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    if errors:
        raise errors[0]
    assert all(o is not None for o in out), "a worker did not finish"
    return out


def test_losses_are_resent_by_later_results_not_timers_and_sums_stay_exact(
        fabric: tuple[AggSwitch, list[Worker]], capsys: pytest.CaptureFixture[str]) -> None:
    sw, workers = fabric
    for r in range(N):
        sw.switch.set_impairment(r + 1, "both", loss=0.02, seed=7 * r + 3)
    rng = np.random.default_rng(18)
    data = [rng.integers(-(2**27), 2**27, size=64 * 300, dtype=np.int32) for _ in range(N)]
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    for _ in range(2):
        out = _run_all(workers, lambda w: w.allreduce(data[w.rank]))
        assert all(np.array_equal(o, exact) for o in out)
    lost = sum(v["lost"] for v in sw.switch.impairment_stats().values())
    fast = sum(w.stats.fast_retransmissions for w in workers)
    timer = sum(w.stats.timer_retransmissions for w in workers)
    assert lost > 20
    assert fast > 2 * timer, (fast, timer)  # only a lost tail of a call, with nothing sent after it, needs a timer
    probes = sum(w.stats.probes for w in workers)
    assert sum(w.stats.retransmissions for w in workers) == fast + timer + probes
    with capsys.disabled():
        print(f"\n[fast recovery] 4 workers x 2 calls x 300 chunks, 2% loss per link direction: exact; frames lost "
              f"{lost}; resends found by a later RESULT {fast}, tail probes {probes}, full timeouts {timer}")


def test_without_loss_nothing_is_overtaken(fabric: tuple[AggSwitch, list[Worker]]) -> None:
    _sw, workers = fabric
    data = [np.full(64 * 200, r + 1, dtype=np.int32) for r in range(N)]
    out = _run_all(workers, lambda w: w.allreduce(data[w.rank]))
    assert all(np.array_equal(o, np.full(64 * 200, 10, dtype=np.int32)) for o in out)
    assert sum(w.stats.fast_retransmissions for w in workers) == 0  # the switch and its ports are FIFO
