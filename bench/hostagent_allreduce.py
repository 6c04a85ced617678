"""Host agent: its own packet rates and CPU per chunk (a whole worker against an instant switch, at 256/1024/2048
values per packet), and all-reduce time in-network vs host ring vs gloo, with the adaptive threshold.

In-network runs 4 `Worker`s (threads) through p4src/p4ina.p4 on one embedded switch; the ring runs 4 `RingAllReduce`
ranks (threads) over TCP loopback on the same machine; gloo runs 4 processes when torch is installed (full runs
only). The adaptive offload threshold is the crossover of the measured in-network and ring times.
"""

from __future__ import annotations

import multiprocessing as mp
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.common import PROGRAM, SingleSwitch
from bench.common import unavailable as unavailable  # this benchmark's availability check (bench/cli.py)
from hostagent import perf
from hostagent.adaptive import crossover
from hostagent.codec import Endpoints
from hostagent.gloo import GlooAllReduce, torch_available
from hostagent.ring import RingAllReduce
from hostagent.transport import SwitchPorts
from hostagent.worker import Worker

N = 4
JOB, POOL = 1, 16


def _parallel(items: list[Any], fn: Callable[[Any], Any]) -> list[Any]:
    out: list[Any] = [None] * len(items)
    errors: list[BaseException] = []

    def go(i: int) -> None:
        try:
            out[i] = fn(items[i])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(items))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def _reducing(data: list[np.ndarray]) -> Callable[[Any], Any]:
    return lambda rank: rank.allreduce(data[rank.rank])


def _timed(items: list[Any], fn: Callable[[Any], Any], repeats: int) -> float:
    """Best wall time of `repeats` collective calls (every rank in its own thread)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        _parallel(items, fn)
        best = min(best, time.perf_counter() - start)
    return best


def start_switch_with_job(*, job: int = JOB, n: int = N, pool: int = POOL, udp_base: int = 41000) -> Any:
    """An embedded switch running p4ina.p4, started, with one job: `n` workers on ports 1..n (child index r on port
    r+1, RESULTs to UDP port udp_base + r), this switch the root."""
    single = SingleSwitch(PROGRAM)
    single.add_job(job, n, pool=pool, udp_base=udp_base)
    return single.switch


class InNetwork:
    """One embedded switch with a 4-worker job and its 4 `Worker`s (threads of this process)."""

    def __init__(self) -> None:
        self.switch = start_switch_with_job()
        transports = SwitchPorts(self.switch)
        self.workers = [
            Worker(JOB, r, n_workers=N, transport=transports.attach(r + 1, 41000 + r), pool_size=POOL,
                   endpoints=Endpoints(udp_port=41000 + r), timeout=0.2)
            for r in range(N)
        ]

    def close(self) -> None:
        self.switch.stop()


def _ring() -> list[RingAllReduce]:
    ranks = [RingAllReduce(r, N) for r in range(N)]
    addrs = [r.listen("127.0.0.1", 0) for r in ranks]
    _parallel(ranks, lambda r: r.connect(addrs))
    return ranks


def _gloo_rank(rank: int, port: int, sizes: list[int], repeats: int, out: Any) -> None:
    g = GlooAllReduce(rank, N, "127.0.0.1", port)
    times = []
    for n in sizes:
        x = np.ones(n, dtype=np.float32)
        g.allreduce(x)  # warm-up
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            g.allreduce(x)
            best = min(best, time.perf_counter() - start)
        times.append(best)
    g.close()
    if rank == 0:
        out.put(times)


def _gloo_times(sizes: list[int], repeats: int) -> list[float] | None:
    if not torch_available():
        return None
    ctx = mp.get_context("forkserver")
    out = ctx.Queue()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    procs = [ctx.Process(target=_gloo_rank, args=(r, port, sizes, repeats, out), daemon=True) for r in range(N)]
    for p in procs:
        p.start()
    try:
        times: list[float] = out.get(timeout=300)
    finally:
        for p in procs:
            p.join(timeout=10)
    return times


def _adaptive(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Which path takes the small messages, which the large, and the threshold between them, from the timings.

    Latency favours one path and bandwidth the other; the orientation is whichever wins at the smallest size."""
    sizes = [r["bytes"] for r in rows]
    net, ring = [r["in_network_s"] for r in rows], [r["ring_s"] for r in rows]
    if net[0] <= ring[0]:
        return {"small": "in_network", "large": "ring", "threshold_bytes": crossover(sizes, net, ring)}
    return {"small": "ring", "large": "in_network", "threshold_bytes": crossover(sizes, ring, net)}


def run(quick: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"agent_pps": perf.measure(quick)}
    # A whole worker against an instant (echo) switch over UDP loopback: its CPU per chunk at fabric widths; then
    # against a slow one (a RESULT per 0.1 ms), where it wakes to a few RESULTs at a time.
    widths = (256, 1024, 2048)
    result["agent_cpu"] = [perf.allreduce_cpu(lanes, n_values=1 << (18 if quick else 20)) for lanes in widths]
    result["agent_cpu_paced"] = [perf.allreduce_cpu(lanes, n_values=1 << 18, pace=1e-4) for lanes in widths]
    sizes = [64, 1024, 16384] if quick else [64, 1024, 16384, 65536, 262144]
    repeats = 1 if quick else 3
    net = InNetwork()
    ring = _ring()
    try:
        rng = np.random.default_rng(0)
        rows: list[dict[str, Any]] = []
        for n in sizes:
            data = [rng.standard_normal(n).astype(np.float32) for _ in range(N)]
            _parallel(net.workers, _reducing(data))  # warm-up: agrees the exponent
            t_net = _timed(net.workers, _reducing(data), repeats)
            t_ring = _timed(ring, _reducing(data), repeats)
            rows.append({"floats": n, "bytes": 4 * n, "in_network_s": round(t_net, 5), "ring_s": round(t_ring, 5),
                         "in_network_goodput_MBps": round(4 * n / t_net / 1e6, 3),
                         "ring_goodput_MBps": round(4 * n / t_ring / 1e6, 3)})
        retrans = sum(w.stats.retransmissions for w in net.workers)
    finally:
        net.close()
        for r in ring:
            r.close()
    gloo = None if quick else _gloo_times(sizes, repeats)
    if gloo is not None:
        for row, t in zip(rows, gloo, strict=True):
            row["gloo_s"] = round(t, 5)
    adaptive = _adaptive(rows)
    result.update(allreduce=rows, in_network_retransmissions=retrans, workers=N, adaptive=adaptive,
                  setup={"note": "embedded Python switch and 4 agents share this machine's cores"})
    largest = rows[-1]
    result["summary"] = {  # what `p4ina bench` shows in its table
        "agent_fill_pps": result["agent_pps"]["fill_int32_pps"],
        "agent_worker_pps": result["agent_pps"]["worker_loopback_pps"],
        **{f"agent_cpu_us_per_chunk_{r['lanes']}": r["cpu_us_per_chunk"] for r in result["agent_cpu"]},
        **{f"agent_cpu_paced_us_per_chunk_{r['lanes']}": r["cpu_us_per_chunk"] for r in result["agent_cpu_paced"]},
        f"innet_{largest['floats']}_s": largest["in_network_s"],
        f"ring_{largest['floats']}_s": largest["ring_s"],
        "adaptive_small": adaptive["small"],
        "threshold_bytes": adaptive["threshold_bytes"],
    }
    return result
