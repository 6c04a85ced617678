"""The program `p4ina run` starts in each Mininet host: one rank of an all-reduce, in-network (through the job's
switches, `hostagent.Worker`) or over the host ring (`hostagent.RingAllReduce`), for `count` steps.

Each rank's tensor for step k is drawn from a seed shared by the run, so every rank can rebuild all ranks' inputs
and check its result against a local reference without shipping tensors around. Values are integers in float32
(|v| <= 1000): their sums are exact in float32, and the block-floating-point transport is exact on them, so a
correct run gives `exact: true` and any lost, doubled or corrupted contribution shows. Output: JSON lines, one
`{"step": k, "seconds": s}` per step as it finishes (the runner's progress bars read them), then one final record.

    python -m p4fabric.hostproc innet --rank 0 --world 4 --size 1048576 --count 3 --seed 1 --out r0.jsonl \
        --job 1 --child 0 --pool 64 --switch-ip 10.255.0.3 --switch-mac 02:00:00:ff:00:03 --ip 10.0.0.1 ...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

VALUE_RANGE = 1000
RING_PORT = 47000


def tensor(seed: int, rank: int, step: int, size: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng([seed, rank, step])
    return rng.integers(-VALUE_RANGE, VALUE_RANGE + 1, size=size).astype(np.float32)


def reference(seed: int, world: int, step: int, size: int) -> npt.NDArray[np.float32]:
    total = np.zeros(size, dtype=np.float64)
    for rank in range(world):
        total += tensor(seed, rank, step, size)
    return total.astype(np.float32)


class Output:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(path, "w")  # closed in close()

    def write(self, record: dict[str, Any]) -> None:
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def run_steps(allreduce: Any, args: argparse.Namespace, out: Output) -> dict[str, Any]:
    """Warm-up (also a barrier: nobody finishes it before everybody started), then the timed steps."""
    allreduce(tensor(args.seed, args.rank, -1 & 0xFFFF, 64))
    seconds: list[float] = []
    exact = True
    max_error = 0.0
    for step in range(args.count):
        data = tensor(args.seed, args.rank, step, args.size)
        start = time.perf_counter()
        result = allreduce(data)
        elapsed = time.perf_counter() - start
        seconds.append(elapsed)
        expected = reference(args.seed, args.world, step, args.size)
        same = result.shape == expected.shape and bool(np.array_equal(result, expected))
        if not same:
            exact = False
            diff = np.abs(np.asarray(result, dtype=np.float64) - expected)
            max_error = max(max_error, float(np.max(diff)) if diff.size else float("inf"))
        out.write({"step": step, "seconds": elapsed, "exact": same})
    return {"step_seconds": seconds, "exact": exact, "max_abs_error": max_error}


def run_innet(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    from hostagent.codec import Endpoints
    from hostagent.transport import UdpTransport
    from hostagent.worker import Worker

    transport = UdpTransport(args.switch_ip, local_port=args.udp_port)
    endpoints = Endpoints(src_mac=args.mac, dst_mac=args.switch_mac, src_ip=args.ip, dst_ip=args.switch_ip,
                          udp_port=args.udp_port)
    worker = Worker(args.job, args.rank, n_workers=args.world, transport=transport, child=args.child,
                    pool_size=args.pool, fmt=args.fmt, endpoints=endpoints, timeout=args.timeout,
                    max_retries=args.max_retries, scale_exp=args.scale, min_timeout=args.min_timeout)
    try:
        result = run_steps(worker.allreduce, args, out)
    finally:
        transport.close()
    result["stats"] = worker.stats.as_dict()
    return result


def run_ring(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    from hostagent.ring import RingAllReduce

    ring = RingAllReduce(args.rank, args.world, timeout=args.ring_timeout)
    try:
        ring.listen(args.ip, RING_PORT)
        ring.connect([(ip, RING_PORT) for ip in args.peers.split(",")])
        result = run_steps(ring.allreduce, args, out)
        result["stats"] = {"bytes_sent": ring.stats.bytes_sent, "retransmissions": 0, "checksum_failures": 0}
    finally:
        ring.close()
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="p4fabric.hostproc", description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("innet", "ring"))
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ip", required=True)
    parser.add_argument("--mac", default="")
    parser.add_argument("--job", type=int, default=1)
    parser.add_argument("--child", type=int, default=None)
    parser.add_argument("--pool", type=int, default=64)
    parser.add_argument("--fmt", default="int32")
    parser.add_argument("--scale", type=int, default=0, help="the job's scale exponent E (p4ina ctl job show)")
    parser.add_argument("--switch-ip", default="")
    parser.add_argument("--switch-mac", default="")
    parser.add_argument("--udp-port", type=int, default=0xBEE0)
    parser.add_argument("--timeout", type=float, default=0.05, help="first retransmission timeout (s)")
    parser.add_argument("--min-timeout", type=float, default=0.01,
                        help="floor of the adaptive retransmission timeout (s)")
    parser.add_argument("--max-retries", type=int, default=200)
    parser.add_argument("--peers", default="", help="ring: every rank's IPv4 address, in rank order")
    parser.add_argument("--ring-timeout", type=float, default=120.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Output(args.out)
    final: dict[str, Any] = {"done": True, "rank": args.rank, "mode": args.mode}
    try:
        final.update(run_innet(args, out) if args.mode == "innet" else run_ring(args, out))
        status = 0
    except Exception as exc:  # reported to the runner in the output file, which puts it in the report
        final.update({"error": f"{type(exc).__name__}: {exc}".splitlines()[0], "exact": False,
                      "traceback": traceback.format_exc()})
        status = 1
    out.write(final)
    out.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
