"""Measurements of the agent's own cost, so that the agent is never the bottleneck (used by `bench/`).

`frame_fill_rate` times the hot path that builds DATA frames (quantize, fill the numpy template, checksum);
`parse_rate` times reading RESULT payloads (header unpack, value view, checksum check); `loopback_rate` runs a full
worker against a null switch that answers every DATA at once, i.e. the whole agent (window, timers, reassembly,
transport calls) with no network in the way. All return packets per second.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable

import numpy as np

from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.codec import ChunkHeaders, Endpoints, build_template, fill_frames, parse_payload
from hostagent.transport import L4_PAYLOAD, Frame, Transport, frame_view
from hostagent.worker import Worker


def _best_rate(packets: int, fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return packets / best


def frame_fill_rate(n_values: int = 1_000_000, fmt: int = P.FMT_INT32, repeats: int = 3) -> float:
    """DATA frames per second built from a float32 tensor (quantization included)."""
    x = np.random.default_rng(0).standard_normal(n_values).astype(np.float32)
    template = build_template(Endpoints(), fmt)
    n = -(-n_values // P.VALUES_PER_PACKET)
    seqs = np.arange(n)
    hdr = ChunkHeaders(job_id=1, child=0, step=0, slots=seqs % 64, versions=(seqs // 64) & 1, seqs=seqs,
                       exps=np.zeros(n, dtype=np.int64))

    def build() -> None:
        f = Q.frac_bits(Q.block_exponent(x), 4)
        wire = Q.to_wire(x, f)
        padded = np.zeros(n * P.VALUES_PER_PACKET)
        padded[:n_values] = wire
        if fmt == P.FMT_INT32:
            rows = Q.encode_int32(padded).reshape(n, P.VALUES_PER_PACKET)
        else:
            rows, _ = Q.encode_narrow(padded.reshape(n, P.VALUES_PER_PACKET), 16 if fmt == P.FMT_INT16 else 8)
        fill_frames(template, fmt, hdr, rows)

    return _best_rate(n, build, repeats)


def parse_rate(n_packets: int = 20_000, repeats: int = 3) -> float:
    """RESULT payloads per second parsed and checksum-verified."""
    rows = np.random.default_rng(1).integers(-(2**20), 2**20, size=(n_packets, P.VALUES_PER_PACKET))
    seqs = np.arange(n_packets)
    hdr = ChunkHeaders(job_id=1, child=0, step=0, slots=seqs % 64, versions=seqs & 1, seqs=seqs,
                       exps=np.zeros(n_packets, dtype=np.int64))
    frames = fill_frames(build_template(Endpoints(), P.FMT_INT32), P.FMT_INT32, hdr, rows)
    payloads = [frames[i, P.AGG_OFFSET :].tobytes() for i in range(n_packets)]

    def parse() -> None:
        for p in payloads:
            r = parse_payload(p)
            assert r is not None and r.checksum_ok

    return _best_rate(n_packets, parse, repeats)


class EchoSwitch(Transport):
    """A one-worker 'switch' that turns every DATA into its RESULT at once: measures the agent alone."""

    def __init__(self) -> None:
        self._out: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def send(self, frame: Frame) -> None:
        payload = bytearray(frame_view(frame)[L4_PAYLOAD:])
        payload[P.OFF_FMT_FLAGS] |= P.FLAG_RESULT
        self._out.put(bytes(payload))

    def recv(self, timeout: float) -> bytes | None:
        try:
            return self._out.get(timeout=timeout) if timeout > 0 else self._out.get_nowait()
        except queue.Empty:
            return None


def loopback_rate(n_values: int = 640_000, pool_size: int = 64, repeats: int = 3) -> float:
    """DATA+RESULT pairs per second through a whole `Worker` (int32) with an instant switch."""
    worker = Worker(1, 0, n_workers=1, transport=EchoSwitch(), pool_size=pool_size)
    data = np.arange(n_values, dtype=np.int32)
    n = -(-n_values // P.VALUES_PER_PACKET)

    def run() -> None:
        out = worker.allreduce(data)
        assert out[-1] == data[-1]

    return _best_rate(n, run, repeats)


def measure(quick: bool = False) -> dict[str, float]:
    """All agent rates (packets/s), rounded, for a JSON report."""
    scale = 10 if quick else 1
    return {
        "fill_int32_pps": round(frame_fill_rate(1_000_000 // scale)),
        "fill_int8_pps": round(frame_fill_rate(1_000_000 // scale, P.FMT_INT8)),
        "parse_pps": round(parse_rate(20_000 // scale)),
        "worker_loopback_pps": round(loopback_rate(640_000 // scale)),
    }
