"""Quantization error vs format: int32/int16/int8 all-reduce through p4ina.p4 against float64 truth and the bound.

Every point is a real collective: `Worker`s (threads) with the job's format send their block-floating-point DATA
through the P4 program on one embedded switch, which aligns, sums (saturating int32) and, for a narrow job,
requantizes the RESULT at the root, exactly as in a fabric run. Nothing of the formats is re-implemented here: the
error is what the real encode, switch and decode produce, and the bound is `hostagent.quantize`'s documented one
for the shared exponent the workers agreed on. A float32 sum in rank order (what a host ring or gloo computes, up
to the order of additions) is the reference row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.common import PROGRAM, SingleSwitch
from bench.common import unavailable as unavailable  # this benchmark's availability check (bench/cli.py)
from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.chunking import ChunkPlan
from hostagent.codec import Endpoints
from hostagent.transport import SwitchPorts, SwitchPortTransport
from hostagent.worker import FORMATS, Worker

POOL = 16
UDP_BASE = 45000
_BITS = {"int32": 32, "int16": 16, "int8": 8}

Sampler = Callable[[np.random.Generator, int], npt.NDArray[np.float32]]

#: Tensor contents per worker: typical gradients, gradients with rare large outliers (one sets the shared exponent
#: for all), and integer-valued floats (counts, which int32 carries exactly).
DISTRIBUTIONS: dict[str, Sampler] = {
    "gaussian": lambda rng, n: (rng.standard_normal(n) * 1e-2).astype(np.float32),
    "heavy_tailed": lambda rng, n: (rng.standard_t(2.0, n) * 1e-2).astype(np.float32),
    "integer": lambda rng, n: rng.integers(-100, 101, n).astype(np.float32),
}


class Fabric:
    """One embedded switch running p4ina.p4 with hosts on ports 1..max_workers; each (workers, format) pair gets a
    job of its own (own slot range, so slot versions start fresh), with this switch its root."""

    def __init__(self, max_workers: int) -> None:
        self.single = SingleSwitch(PROGRAM)
        ports = SwitchPorts(self.single.switch)
        self.transports: list[SwitchPortTransport] = [ports.attach(r + 1, UDP_BASE + r) for r in range(max_workers)]
        self.jobs = 0

    def job(self, n: int, fmt: str) -> list[Worker]:
        """Install a job of `n` workers whose DATA and RESULTs use `fmt`; its workers, ranks 0..n-1."""
        job, idx = self.jobs + 1, self.jobs
        self.jobs += 1
        self.single.add_job(job, n, pool=POOL, udp_base=UDP_BASE, job_idx=idx, slot_base=idx * POOL,
                            result_fmt=FORMATS[fmt])
        return [Worker(job, r, n_workers=n, transport=self.transports[r], pool_size=POOL, fmt=fmt,
                       endpoints=Endpoints(udp_port=UDP_BASE + r), timeout=0.2) for r in range(n)]

    def close(self) -> None:
        self.single.stop()


def _allreduce(workers: list[Worker], data: list[npt.NDArray[np.float32]], key: str) -> list[npt.NDArray[Any]]:
    """One collective, every rank in its own thread; `key` makes each rank agree the exponent afresh."""
    with ThreadPoolExecutor(len(workers)) as pool:
        return list(pool.map(lambda w: w.allreduce(data[w.rank], key=key), workers))


def _errors(result: npt.NDArray[Any], truth: npt.NDArray[np.float64]) -> dict[str, float]:
    err = np.abs(result.astype(np.float64) - truth)
    rms = float(np.sqrt(np.mean(err**2)))
    scale = float(np.sqrt(np.mean(truth**2)))
    return {"max_abs_error": float(err.max()), "rms_error": rms, "rel_rms_error": rms / scale if scale else 0.0}


def _bound(fmt: str, exponent: int, n: int, truth: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    if fmt == "int32":
        return Q.int32_error_bound(exponent, n, truth, np.float32)
    bits = _BITS[fmt]
    return Q.narrow_error_bound(exponent, n, bits, truth, np.float32, result_bits=bits)


def measure(workers: list[Worker], fmt: str, data: list[npt.NDArray[np.float32]], key: str) -> dict[str, Any]:
    """Error of one all-reduce against float64 truth and against the bound, and the bytes it put on the wire."""
    n, size = len(workers), data[0].size
    sent_before = sum(w.stats.bytes_sent for w in workers)
    retx_before = sum(w.stats.retransmissions for w in workers)
    redos_before = sum(w.stats.overflow_redos for w in workers)
    results = _allreduce(workers, data, key)
    truth = np.sum(np.asarray(data, dtype=np.float64), axis=0)
    exponent = workers[0].last_exponent
    assert exponent is not None  # set by every float all-reduce
    bound = _bound(fmt, exponent, n, truth)
    err = np.abs(results[0].astype(np.float64) - truth)
    chunks = ChunkPlan(size, P.VALUES_PER_PACKET).n_chunks
    sent = sum(w.stats.bytes_sent for w in workers) - sent_before
    return {
        "format": fmt, "workers": n, "elements": size, "exponent": exponent,
        **_errors(results[0], truth),
        "max_bound": float(bound.max()),
        "max_error_over_bound": float(np.max(err / bound)),
        "within_bound": bool(np.all(err <= bound)),
        "ranks_agree": all(np.array_equal(results[0], r) for r in results[1:]),
        # per worker link: DATA frames of the format and the RESULT frames coming back (Ethernet to values),
        # and what a worker really sent (exponent round and retransmissions included)
        "data_bytes_per_element": chunks * P.frame_len(FORMATS[fmt]) / size,
        "result_bytes_per_element": chunks * P.frame_len(FORMATS[fmt]) / size,
        "sent_bytes_per_element": sent / n / size,
        "retransmissions": sum(w.stats.retransmissions for w in workers) - retx_before,
        "overflow_redos": sum(w.stats.overflow_redos for w in workers) - redos_before,
    }


def float32_reference(data: list[npt.NDArray[np.float32]]) -> dict[str, float]:
    """Error of summing the float32 tensors in rank order in float32 (a host ring's or gloo's arithmetic)."""
    acc = np.zeros_like(data[0])
    for x in data:
        acc += x
    return _errors(acc, np.sum(np.asarray(data, dtype=np.float64), axis=0))


def run(quick: bool) -> dict[str, Any]:
    started = time.perf_counter()
    worker_counts = (2, 4, 16) if quick else (2, 4, 8, 16)
    size = 2048 if quick else 16384
    rng = np.random.default_rng(12)
    inputs = {(dist, n): [sample(rng, size) for _ in range(n)]
              for dist, sample in DISTRIBUTIONS.items() for n in worker_counts}
    rows: list[dict[str, Any]] = []
    fabric = Fabric(max(worker_counts))
    try:
        for n in worker_counts:
            for fmt in FORMATS:
                workers = fabric.job(n, fmt)
                for dist in DISTRIBUTIONS:
                    rows.append({"distribution": dist, **measure(workers, fmt, inputs[dist, n], key=dist)})
    finally:
        fabric.close()
    reference = [{"distribution": dist, "format": "float32", "workers": n, **float32_reference(inputs[dist, n])}
                 for dist in DISTRIBUTIONS for n in worker_counts]
    largest = max(worker_counts)

    def rel(fmt: str) -> float:
        row = next(r for r in rows if r["format"] == fmt and r["distribution"] == "gaussian"
                   and r["workers"] == largest)
        return float(row["rel_rms_error"])

    return {
        "program": PROGRAM.name, "target": "embedded", "elements": size, "worker_counts": list(worker_counts),
        "distributions": list(DISTRIBUTIONS), "rows": rows, "float32_reference": reference,
        "summary": {
            "within_bound": f"{sum(r['within_bound'] for r in rows)}/{len(rows)}",
            # relative RMS error of a gaussian all-reduce in parts per million (the table rounds to 3 decimals)
            f"int32_rel_rms_ppm_{largest}w": float(f"{1e6 * rel('int32'):.3g}"),
            f"int16_rel_rms_ppm_{largest}w": float(f"{1e6 * rel('int16'):.3g}"),
            f"int8_rel_rms_ppm_{largest}w": float(f"{1e6 * rel('int8'):.3g}"),
            "int8_vs_int32_data_bytes": round(
                next(r["data_bytes_per_element"] for r in rows if r["format"] == "int8")
                / next(r["data_bytes_per_element"] for r in rows if r["format"] == "int32"), 3),
            "seconds": round(time.perf_counter() - started, 1),
        },
    }
