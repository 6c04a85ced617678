"""Measurements of the agent's own cost, so that the agent is never the bottleneck (used by `bench/`).

`frame_fill_rate` times the hot path that builds DATA frames (quantize, fill the numpy template, checksum);
`parse_rate` times reading RESULT payloads (header unpack, value view, checksum check); `loopback_rate` runs a full
worker against a null switch that answers every DATA at once, i.e. the whole agent (window, timers, reassembly,
transport calls) with no network in the way. All return packets per second.
"""

from __future__ import annotations

import os
import queue
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.codec import ChunkHeaders, Endpoints, build_template, fill_frames, parse_payload
from hostagent.transport import L4_PAYLOAD, Frame, Transport, UdpTransport, frame_view
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


def _udp_echo(port_out: Any, pace: float = 0.0) -> None:
    """The UDP echo 'switch' (run in its own process by `allreduce_cpu`): every DATA comes back as its RESULT,
    in bursts (recvmmsg/sendmmsg), so the worker's process pays only for the worker. With `pace` > 0 it answers
    one RESULT per `pace` seconds, as a switch slower than its workers does (the worker then wakes to a few
    RESULTs at a time)."""
    from pktio.mmsg import MmsgReceiver, MmsgSender

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], file=port_out, flush=True)
    peer = int(sys.stdin.readline())
    sock.connect(("127.0.0.1", peer))
    rx, tx = MmsgReceiver(sock, slots=64, slot_size=16384), MmsgSender(sock, slots=64, slot_size=16384)
    while True:
        select.select([sock], [], [])
        for payload in rx.recv_batch():
            if len(payload) < 2:
                return  # the stop datagram
            p = bytearray(payload)
            p[P.OFF_FMT_FLAGS] |= P.FLAG_RESULT
            tx.add(p)
            if pace:
                tx.flush()
                time.sleep(pace)
        tx.flush()


def allreduce_cpu(lanes: int, n_values: int = 1 << 20, pool_size: int = 64, repeats: int = 3,
                  pace: float = 0.0, fmt: str = "int32", max_window: int | None = None) -> dict[str, Any]:
    """CPU of one worker per chunk (DATA out and RESULT in) for a float32 all-reduce of `n_values` packed
    `lanes` values per packet, through `UdpTransport` on loopback to an echo switch in another process.

    This is what a fabric worker spends per step (quantize, frames, window, send/recv system calls, reassembly)
    without the switches' cost. The exponent is predicted from a warm-up call, as in training steps. `pace`: the
    echo's seconds per RESULT (0: as fast as it can). `fmt`: the job's format (the echo returns a narrow DATA as
    its RESULT, at its own exponent E + s, as a root's requantized RESULT comes). Reports the best of `repeats`
    calls: CPU microseconds of this thread per chunk, wall seconds per call, and wake-ups per chunk."""
    echo = subprocess.Popen([sys.executable, "-m", "hostagent.perf", "--udp-echo", str(pace)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert echo.stdin is not None and echo.stdout is not None
    transport: UdpTransport | None = None
    try:
        echo_port = int(echo.stdout.readline())
        transport = UdpTransport("127.0.0.1", local_port=0, bind_addr="127.0.0.1", agg_port=echo_port)
        echo.stdin.write(f"{transport.sock.getsockname()[1]}\n")
        echo.stdin.flush()
        worker = Worker(1, 0, n_workers=1, transport=transport, pool_size=pool_size, values_per_packet=lanes,
                        timeout=0.2, fmt=fmt, max_window=max_window)
        x = np.random.default_rng(lanes).standard_normal(n_values).astype(np.float32)
        worker.allreduce(x)  # warm-up: agrees the exponent, then every call is one exchange (predicted exponent)
        expected = worker.allreduce(x)
        n_chunks = -(-n_values // lanes)
        wakeups, chunks = worker.stats.wakeups, worker.stats.chunks
        best_cpu, best_wall = float("inf"), float("inf")
        for _ in range(repeats):
            cpu, wall = time.thread_time(), time.perf_counter()
            out = worker.allreduce(x)
            best_cpu = min(best_cpu, time.thread_time() - cpu)
            best_wall = min(best_wall, time.perf_counter() - wall)
            if not np.array_equal(out, expected):
                raise AssertionError("the echo all-reduce changed between calls")
        wakes = (worker.stats.wakeups - wakeups) / max(worker.stats.chunks - chunks, 1)
        return {"lanes": lanes, "values": n_values, "chunks": n_chunks, "pace_s": pace, "fmt": fmt,
                "cpu_us_per_chunk": round(best_cpu / n_chunks * 1e6, 2), "wall_s": round(best_wall, 4),
                "wakeups_per_chunk": round(wakes, 3), "retransmissions": worker.stats.retransmissions}
    finally:
        if transport is not None:
            transport.sock.send(b"x")
            transport.close()
        try:
            echo.wait(timeout=5)
        except subprocess.TimeoutExpired:
            echo.kill()
            echo.wait()


def measure(quick: bool = False) -> dict[str, float]:
    """All agent rates (packets/s), rounded, for a JSON report."""
    scale = 10 if quick else 1
    return {
        "fill_int32_pps": round(frame_fill_rate(1_000_000 // scale)),
        "fill_int8_pps": round(frame_fill_rate(1_000_000 // scale, P.FMT_INT8)),
        "parse_pps": round(parse_rate(20_000 // scale)),
        "worker_loopback_pps": round(loopback_rate(640_000 // scale)),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--udp-echo"]:
        _udp_echo(sys.stdout, float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
    else:
        import json

        print(json.dumps([allreduce_cpu(lanes) for lanes in (256, 1024, 2048)], indent=2))
