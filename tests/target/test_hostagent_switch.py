"""Issue 6, "Must show": host agents (`hostagent.Worker`) all-reducing through p4src/p4ina.p4 on the embedded switch.

Four workers in threads, each on its own switch port through `SwitchPorts` (the in-process transport); the job's
entries are installed over the P4Runtime entity codec with the harness of the aggregation tests (aggnet.py).
float32 results stay within the documented bound of the float64 reference; int32 is exact, also with 5% loss and
2% duplication on every worker link (the switch ports' seeded impairments), and the retransmissions are reported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from aggnet import AggSwitch, JobOnSwitch, Neighbor, compiled_program, install_job, ip_str, mac_str

from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.codec import Endpoints
from hostagent.exceptions import QuantizationError
from hostagent.transport import SwitchPorts
from hostagent.worker import Worker

N = 4
JOB = 6
POOL = 32
SCALE = -8  # the job's scale exponent E: any value works for the worker, it only labels the wire units


@dataclass
class Job:
    switch: AggSwitch
    workers: list[Worker]


def _start_job(fmt: str = "int32", result_fmt: int = P.FMT_INT32, **worker_opts: Any) -> Job:
    compiled_program()
    sw = AggSwitch("s1", 0, lambda _name, _port, _frame: None)
    ports = SwitchPorts(sw.switch)
    children: dict[int, tuple[int, Neighbor]] = {}
    workers = []
    for r in range(N):
        port = r + 1
        who = Neighbor(mac=0x02_00_00_00_00_10 + r, ip=0x0A_00_00_10 + r, udp_port=41000 + r)
        children[port] = (r, who)
        ep = Endpoints(src_mac=mac_str(who.mac), dst_mac=mac_str(sw.mac), src_ip=ip_str(who.ip), dst_ip=ip_str(sw.ip),
                       udp_port=who.udp_port)
        opts: dict[str, Any] = {"pool_size": POOL, "scale_exp": SCALE, "fmt": fmt, "timeout": 0.2, "max_retries": 40}
        opts.update(worker_opts)
        workers.append(Worker(JOB, r, n_workers=N, child=r, transport=ports.attach(port, who.udp_port), endpoints=ep,
                              **opts))
    install_job(sw, JobOnSwitch(job_id=JOB, job_idx=0, slot_count=POOL, children=children, mcast_grp=1,
                                scale=SCALE, result_fmt=result_fmt))
    return Job(sw, workers)


@pytest.fixture
def job() -> Iterator[Job]:
    j = _start_job()
    yield j
    j.switch.stop()


def _run_all(workers: list[Worker], fn: Callable[[Worker], Any]) -> list[Any]:
    out: list[Any] = [None] * len(workers)
    errors: list[BaseException] = []

    def go(i: int) -> None:
        try:
            out[i] = fn(workers[i])
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,), name=f"worker{i}") for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    if errors:
        raise errors[0]
    assert all(o is not None for o in out), "a worker did not finish"
    return out


def _reducing(data: list[np.ndarray]) -> Callable[[Worker], np.ndarray]:
    return lambda w: w.allreduce(data[w.rank])


@pytest.mark.parametrize("length", [1, 63, 64, 65, 100_000])
def test_float32_through_the_switch_within_the_documented_bound(job: Job, length: int) -> None:
    rng = np.random.default_rng(length)
    data = [(rng.standard_normal(length) * 3).astype(np.float32) for _ in range(N)]
    out = _run_all(job.workers, _reducing(data))
    exact = np.sum([d.astype(np.float64) for d in data], axis=0)
    e = job.workers[0].last_exponent
    assert e == max(Q.block_exponent(d) for d in data)
    bound = Q.int32_error_bound(e, N, exact, np.float32)
    for o in out:
        assert o.dtype == np.float32 and o.shape == (length,)
        assert np.array_equal(o, out[0])
    assert np.all(np.abs(out[0].astype(np.float64) - exact) <= bound)
    assert all(w.stats.checksum_failures == 0 for w in job.workers)


@pytest.mark.parametrize("length", [1, 63, 64, 65, 100_000])
def test_int32_through_the_switch_is_exact(job: Job, length: int) -> None:
    rng = np.random.default_rng(100 + length)
    data = [rng.integers(-(2**28), 2**28, size=length, dtype=np.int32) for _ in range(N)]
    out = _run_all(job.workers, _reducing(data))
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    for o in out:
        assert o.dtype == np.int32 and np.array_equal(o, exact)


def test_int32_exact_with_loss_and_duplication_on_worker_links(job: Job, capsys: pytest.CaptureFixture[str]) -> None:
    for r in range(N):
        job.switch.switch.set_impairment(r + 1, "both", loss=0.05, dup=0.02, seed=10 * r + 1)
    rng = np.random.default_rng(7)
    data = [rng.integers(-(2**28), 2**28, size=20_000, dtype=np.int32) for _ in range(N)]
    out = _run_all(job.workers, _reducing(data))
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    for o in out:
        assert np.array_equal(o, exact)
    impaired = job.switch.switch.impairment_stats()
    lost = sum(v["lost"] for v in impaired.values())
    duplicated = sum(v["duplicated"] for v in impaired.values())
    retrans = [w.stats.retransmissions for w in job.workers]
    assert lost > 0 and duplicated > 0
    assert sum(retrans) > 0
    with capsys.disabled():
        print(f"\n[hostagent] 4 workers x 20000 int32 through the switch, 5% loss/2% dup per link: exact; "
              f"frames lost {lost}, duplicated {duplicated}; retransmissions per worker {retrans}")


@pytest.mark.parametrize("fmt,result_fmt", [("int16", P.FMT_INT16), ("int8", P.FMT_INT32), ("int8", P.FMT_INT8)])
def test_narrow_contributions_and_results(fmt: str, result_fmt: int, capsys: pytest.CaptureFixture[str]) -> None:
    bits, result_bits = {"int16": 16, "int8": 8}[fmt], {P.FMT_INT32: 32, P.FMT_INT16: 16, P.FMT_INT8: 8}[result_fmt]
    j = _start_job(fmt=fmt, result_fmt=result_fmt)
    try:
        rng = np.random.default_rng(16)
        data = [rng.standard_normal(1000).astype(np.float32) for _ in range(N)]
        out = _run_all(j.workers, _reducing(data))
        exact = np.sum([d.astype(np.float64) for d in data], axis=0)
        e = j.workers[0].last_exponent
        assert e is not None
        bound = Q.narrow_error_bound(e, N, bits, exact, np.float32, result_bits=result_bits)
        assert np.all(np.abs(out[0].astype(np.float64) - exact) <= bound)
        assert all(np.array_equal(o, out[0]) for o in out)
        with capsys.disabled():
            print(f"\n[hostagent] {fmt} in, {P.FORMAT_NAMES[result_fmt]} out: max error "
                  f"{np.abs(out[0] - exact).max():.3g} (bound {bound.max():.3g})")
    finally:
        j.switch.stop()


def test_two_level_tree_with_lossy_uplinks(capsys: pytest.CaptureFixture[str]) -> None:
    """Leaves l1, l2 (two workers each, child indices 0 and 1 at their leaf; uplink port 3) under spine s (l1 on
    port 1, l2 on port 2). Uplinks lose 5% and duplicate 2%: partial sums and RESULTs are recovered by the
    workers' retransmissions through the leaves' stored state."""
    compiled_program()
    leaves = [AggSwitch(f"l{i + 1}", i + 1, lambda _n, _p, _f: None) for i in range(2)]
    spine = AggSwitch("s", 3, lambda _n, _p, _f: None)
    switches = [*leaves, spine]
    try:
        workers: list[Worker] = []
        for i, leaf in enumerate(leaves):
            # wire leaf port 3 <-> spine port i+1 (switch output callbacks inject into the peer)
            leaf.switch.add_output_callback(lambda port, frame, i=i: port == 3 and spine.switch.inject(i + 1, frame))
            spine.switch.add_output_callback(lambda port, frame, i=i, leaf=leaf: port == i + 1 and leaf.switch.inject(3, frame))
            leaf.switch.set_impairment(3, "both", loss=0.05, dup=0.02, seed=100 + i)
            ports = SwitchPorts(leaf.switch)
            children: dict[int, tuple[int, Neighbor]] = {}
            for j in range(2):
                rank = 2 * i + j
                who = Neighbor(mac=0x02_00_00_00_00_20 + rank, ip=0x0A_00_00_20 + rank, udp_port=42000 + rank)
                children[j + 1] = (j, who)
                ep = Endpoints(src_mac=mac_str(who.mac), dst_mac=mac_str(leaf.mac), src_ip=ip_str(who.ip),
                               dst_ip=ip_str(leaf.ip), udp_port=who.udp_port)
                workers.append(Worker(JOB, rank, n_workers=N, child=j, pool_size=POOL, scale_exp=SCALE,
                                      transport=ports.attach(j + 1, who.udp_port), endpoints=ep, max_retries=40))
            install_job(leaf, JobOnSwitch(job_id=JOB, job_idx=0, slot_count=POOL, children=children, mcast_grp=1,
                                          scale=SCALE, parent=(3, i, spine.neighbor())))
        install_job(spine, JobOnSwitch(job_id=JOB, job_idx=0, slot_count=POOL, mcast_grp=1, scale=SCALE,
                                       children={i + 1: (i, leaf.neighbor()) for i, leaf in enumerate(leaves)}))
        rng = np.random.default_rng(22)
        ints = [rng.integers(-(2**26), 2**26, size=3000, dtype=np.int32) for _ in range(N)]
        out = _run_all(workers, _reducing(ints))
        exact = np.sum(ints, axis=0, dtype=np.int64).astype(np.int32)
        assert all(np.array_equal(o, exact) for o in out)
        floats = [rng.standard_normal(3000).astype(np.float32) for _ in range(N)]
        out = _run_all(workers, _reducing(floats))
        ref = np.sum([f.astype(np.float64) for f in floats], axis=0)
        e = workers[0].last_exponent
        assert e is not None
        assert np.all(np.abs(out[0].astype(np.float64) - ref) <= Q.int32_error_bound(e, N, ref, np.float32))
        lost = sum(v["lost"] for sw in leaves for v in sw.switch.impairment_stats().values())
        assert lost > 0
        with capsys.disabled():
            print(f"\n[hostagent] two-level tree, lossy uplinks: {lost} frames lost, retransmissions per worker "
                  f"{[w.stats.retransmissions for w in workers]}")
    finally:
        for sw in switches:
            sw.stop()


def test_int32_overflow_is_reported_not_wrapped(job: Job) -> None:
    data = [np.full(70, 2**30, dtype=np.int32) for _ in range(N)]  # the sum, 2**32, does not fit int32
    errors: list[str] = []

    def call(w: Worker) -> bool:
        try:
            w.allreduce(data[w.rank])
        except QuantizationError as exc:
            errors.append(str(exc))
        return True

    _run_all(job.workers, call)
    assert len(errors) == N and all("overflowed" in e for e in errors)


def test_two_jobs_share_a_switch_concurrently() -> None:
    """Jobs 6 and 7 (two workers each, disjoint slot pools) all-reduce at the same time on one switch: each job
    gets its own sum, with the same relative slot numbers in both pools."""
    compiled_program()
    sw = AggSwitch("s1", 0, lambda _name, _port, _frame: None)
    ports = SwitchPorts(sw.switch)
    try:
        workers: list[Worker] = []
        for job_idx, job_id in enumerate((6, 7)):
            children: dict[int, tuple[int, Neighbor]] = {}
            for child in range(2):
                port = 1 + 2 * job_idx + child
                who = Neighbor(mac=0x02_00_00_00_00_30 + port, ip=0x0A_00_00_30 + port, udp_port=43000 + port)
                children[port] = (child, who)
                workers.append(Worker(job_id, child, n_workers=2, child=child, pool_size=16, scale_exp=SCALE,
                                      transport=ports.attach(port, who.udp_port),
                                      endpoints=Endpoints(udp_port=who.udp_port)))
            install_job(sw, JobOnSwitch(job_id=job_id, job_idx=job_idx, slot_base=16 * job_idx, slot_count=16,
                                        children=children, mcast_grp=job_idx + 1, scale=SCALE))
        data = [np.full(2000, 10 ** i, dtype=np.int32) for i in range(4)]
        by_worker = {id(w): data[i] for i, w in enumerate(workers)}
        out = _run_all(workers, lambda w: w.allreduce(by_worker[id(w)]))
        assert all(np.array_equal(o, np.full(2000, 11)) for o in out[:2])
        assert all(np.array_equal(o, np.full(2000, 1100)) for o in out[2:])
    finally:
        sw.stop()
