"""The program `p4ina run` starts in each Mininet host: one rank of an all-reduce, in-network (through the job's
switches, `hostagent.Worker`), over the host ring (`hostagent.RingAllReduce`) or with torch.distributed's gloo
(`hostagent.GlooAllReduce`), for `count` steps.

Each rank's tensor for step k is drawn from a seed shared by the run, so every rank can rebuild all ranks' inputs
and check its result against a local reference without shipping tensors around. Values are integers in float32
(|v| <= 1000): their sums are exact in float32, and the int32 block-floating-point transport is exact on them, so a
correct int32, ring or gloo run gives `exact: true` and any lost, doubled or corrupted contribution shows. int16 and
int8 lose bits by design: their results are checked against `hostagent.quantize.narrow_error_bound` for the
exponent the worker used and a job whose result format is the same as `--fmt` (how `p4ina run` creates it), and
reported as `within_bound` with the largest error. Output: JSON lines, one `{"step": k, "seconds": s, ...}` per step
as it finishes (the runner's progress bars read them), then one final record.

A run with spares (`p4ina run --kill-worker`, docs/run.md) adds `--exponent E --checkpoint FILE` to every in-network
rank (one exchange per call; the protocol state written before each call), and starts each spare as
`hostproc standby GO_FILE`: imported and waiting until the runner writes its arguments (the dead rank's, plus
`--resume CHECKPOINT --cells FILE`), see `p4fabric.spare`.

    python -m p4fabric.hostproc innet --rank 0 --world 4 --size 1048576 --count 3 --seed 1 --out r0.jsonl \
        --job 1 --child 0 --pool 64 --switch-ip 10.255.0.3 --switch-mac 02:00:00:ff:00:03 --ip 10.0.0.1 ...
    python -m p4fabric.hostproc gloo --rank 1 --world 4 --size 1048576 --out r1.jsonl --ip 10.0.0.2 \
        --master 10.0.0.1 --ifname h2-eth0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hostagent.protocol import AGG_PORT
from p4fabric.spare import Resume, restore, write_checkpoint

VALUE_RANGE = 1000
RING_PORT = 47000
GLOO_PORT = 29500  # rank 0's TCP store (torch.distributed's customary MASTER_PORT)
NARROW_BITS = {"int16": 16, "int8": 8}

#: Given a step's reference sum, the per-element error its result may have.
Bound = Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float64]]


def tensor(seed: int, rank: int, step: int, size: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng([seed, rank, step])
    return rng.integers(-VALUE_RANGE, VALUE_RANGE + 1, size=size).astype(np.float32)


def reference(seed: int, world: int, step: int, size: int) -> npt.NDArray[np.float32]:
    total = np.zeros(size, dtype=np.float64)
    for rank in range(world):
        total += tensor(seed, rank, step, size)
    return total.astype(np.float32)


#: Per worker: inputs and reference sums up to this many bytes are made before the warm-up (see `StepData`).
PRECOMPUTE_BYTES = 1 << 30


class StepData:
    """Each step's input tensor and reference sum, made before the warm-up when all of them fit in `PRECOMPUTE_BYTES`.

    Why: the warm-up is a barrier and the steps run back to back after it. Making a step's data between steps
    (a reference sums `world` generated tensors: ~75 ms of CPU per worker per 4 MB step here) would run while the
    other workers are inside a timed step, and on a CPU-bound emulation (every switch and host shares two cores) that
    work is charged to the all-reduce being measured, for the ring and in-network alike. What does not fit is made
    when needed, as before."""

    def __init__(self, args: argparse.Namespace, steps: range) -> None:
        self.args = args
        self.ready: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]] = {}
        if len(steps) * args.size * 8 <= PRECOMPUTE_BYTES:
            self.ready = {step: self._make(step) for step in steps}

    def _make(self, step: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        a = self.args
        return tensor(a.seed, a.rank, step, a.size), reference(a.seed, a.world, step, a.size)

    def take(self, step: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """(input, expected sum) of `step`; the stored pair is released once taken."""
        return self.ready.pop(step) if step in self.ready else self._make(step)


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


def check(result: npt.NDArray[Any], expected: npt.NDArray[np.float32],
          bound: npt.NDArray[np.float64] | None) -> dict[str, Any]:
    """`exact` (bit-equal), `within_bound` (every |error| <= its bound; without a bound, the same as exact),
    `max_abs_error` and `error_bound` (the largest per-element bound; 0 without one) of one step's result."""
    limit = float(np.max(bound)) if bound is not None and bound.size else 0.0
    if result.shape != expected.shape:
        return {"exact": False, "within_bound": False, "max_abs_error": float("inf"), "error_bound": limit}
    exact = bool(np.array_equal(result, expected))
    if exact:  # the common case needs no float64 copies: this runs while other workers may still be in a step
        return {"exact": True, "within_bound": True, "max_abs_error": 0.0, "error_bound": limit}
    diff = np.abs(np.asarray(result, dtype=np.float64) - expected.astype(np.float64))
    max_error = float(np.max(diff)) if diff.size else 0.0
    if not np.all(np.isfinite(diff)):
        max_error = float("inf")
    within = exact if bound is None else bool(np.all(diff <= bound))
    return {"exact": exact, "within_bound": within, "max_abs_error": max_error, "error_bound": limit}


def run_steps(allreduce: Any, args: argparse.Namespace, out: Output,
              bound: Callable[[], Bound | None] = lambda: None, *, before: Callable[[int], None] | None = None,
              first_call: int = 0, skipped: Callable[[int], npt.NDArray[np.bool_] | None] = lambda c: None
              ) -> dict[str, Any]:
    """Warm-up (also a barrier: nobody finishes it before everybody started), then the timed steps, back to back:
    their inputs and reference sums are made before the warm-up (`StepData`). The warm-up has the steps' size, as
    in nccl-tests, so the timed steps run in steady state: a quantizing worker's first call of a size agrees the
    exponent in an extra round, later calls predict it from the previous result (`Worker.allreduce`).

    `bound()` is asked after each step (a quantized step's bound depends on the exponent that step used). Calls are
    numbered 0 (the warm-up), k + 1 (step k): `before(call)` runs first (a checkpoint), `first_call` is where a
    spare takes over a dead rank, and `skipped(call)` marks elements a spare did not receive (checked: the rest)."""
    steps = range(max(first_call - 1, 0), args.count)
    data_of = StepData(args, steps)
    if first_call == 0:
        if before is not None:
            before(0)
        allreduce(tensor(args.seed, args.rank, -1 & 0xFFFF, args.size))
    seconds: list[float] = []
    final = {"exact": True, "within_bound": True, "max_abs_error": 0.0, "error_bound": 0.0}
    for step in steps:
        if before is not None:
            before(step + 1)
        data, expected = data_of.take(step)
        start = time.perf_counter()
        result = allreduce(data)
        elapsed = time.perf_counter() - start
        finished = time.time()
        seconds.append(elapsed)
        limit = bound()
        per_element = limit(expected) if limit is not None else None
        extra: dict[str, Any] = {}
        mask = skipped(step + 1)
        if mask is not None:
            keep = ~mask
            result, expected = result[keep], expected[keep]
            per_element = per_element[keep] if per_element is not None else None
            extra = {"resumed": True, "skipped": int(mask.sum())}
        verdict = check(result, expected, per_element)
        final["exact"] = final["exact"] and verdict["exact"]
        final["within_bound"] = final["within_bound"] and verdict["within_bound"]
        final["max_abs_error"] = max(final["max_abs_error"], verdict["max_abs_error"])
        final["error_bound"] = max(final["error_bound"], verdict["error_bound"])
        out.write({"step": step, "seconds": elapsed, "t": finished, **verdict, **extra})
    return {"step_seconds": seconds, **final}


def innet_bound(worker: Any, fmt: str, world: int) -> Bound | None:
    """The documented error bound of the worker's last call in a narrow format (None for int32: bit-exact).

    The job's result format is taken to be `fmt` too (each format gets its own job in `p4ina run`)."""
    from hostagent.quantize import narrow_error_bound

    bits = NARROW_BITS.get(fmt)
    exponent = worker.last_exponent
    if bits is None or exponent is None:
        return None
    return lambda expected: narrow_error_bound(exponent, world, bits, expected, np.float32, result_bits=bits)


def run_innet(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    from hostagent.codec import Endpoints
    from hostagent.transport import UdpTransport
    from hostagent.worker import Worker

    transport = UdpTransport(args.switch_ip, local_port=args.udp_port)
    endpoints = Endpoints(src_mac=args.mac, dst_mac=args.switch_mac, src_ip=args.ip, dst_ip=args.switch_ip,
                          udp_port=args.udp_port)
    worker = Worker(args.job, args.rank, n_workers=args.world, transport=transport, child=args.child,
                    pool_size=args.pool, fmt=args.fmt, endpoints=endpoints, timeout=args.timeout,
                    max_retries=args.max_retries, scale_exp=args.scale, min_timeout=args.min_timeout,
                    values_per_packet=args.values, job_values=args.job_values, max_window=args.window)
    call = worker.allreduce if args.exponent is None else (lambda a: worker.allreduce(a, exponent=args.exponent))
    before = None
    if args.checkpoint is not None:
        checkpoint: Path = args.checkpoint
        before = lambda c: write_checkpoint(checkpoint, c, worker)  # noqa: E731
    first_call = 0
    skipped: Callable[[int], npt.NDArray[np.bool_] | None] = lambda c: None  # noqa: E731
    resume = None
    if args.resume is not None:
        if args.exponent is None:
            raise ValueError("a spare needs the run's fixed --exponent (every call one exchange)")
        # no checkpoint: the dead rank died before its first call, so it sent nothing; start from the beginning
        state: dict[str, Any] = json.loads(args.resume.read_text()) if args.resume.exists() else {
            "call": 0, "step": 0, "bits": [0] * args.pool}
        restore(worker, state)
        resume = Resume(worker, json.loads(args.cells.read_text()), timeout=args.timeout)
        first_call = int(state["call"])
        skipped = lambda c: resume.skipped_elements(args.size) if c == first_call and c > 0 else None  # noqa: E731
    try:
        result = run_steps(call, args, out, lambda: innet_bound(worker, args.fmt, args.world), before=before,
                           first_call=first_call, skipped=skipped)
    finally:
        transport.close()
    if resume is not None:
        result["resumed"] = {"call": first_call, "skipped_chunks": len(resume.skipped), "resends": resume.resends}
    result["stats"] = worker.stats.as_dict()
    result["fmt"] = args.fmt
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


def run_gloo(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    """torch.distributed's gloo, rendezvous at rank 0's TCP store; bound to the host's fabric interface, since a
    Mininet host's hostname resolves to an address outside its namespace."""
    if args.ifname:
        os.environ["GLOO_SOCKET_IFNAME"] = args.ifname
    from hostagent.gloo import GlooAllReduce

    gloo = GlooAllReduce(args.rank, args.world, args.master, args.port, timeout=args.ring_timeout)
    try:
        result = run_steps(gloo.allreduce, args, out)
    finally:
        gloo.close()
    result["stats"] = {"retransmissions": 0, "checksum_failures": 0}
    return result


RUNNERS: dict[str, Callable[[argparse.Namespace, Output], dict[str, Any]]] = {
    "innet": run_innet, "ring": run_ring, "gloo": run_gloo}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="p4fabric.hostproc", description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=tuple(RUNNERS))
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
    parser.add_argument("--window", type=int, default=None,
                        help="innet: the largest congestion window in chunks (default: the pool)")
    parser.add_argument("--fmt", default="int32", choices=("int32", *NARROW_BITS),
                        help="innet: wire format; the job's result format must be the same")
    parser.add_argument("--scale", type=int, default=0, help="the job's scale exponent E (p4ina ctl job show)")
    parser.add_argument("--values", type=int, default=64, help="innet: values per packet this worker packs")
    parser.add_argument("--job-values", type=int, default=None,
                        help="innet: the job's values per packet (p4ina ctl job show); refused if not --values")
    parser.add_argument("--switch-ip", default="")
    parser.add_argument("--switch-mac", default="")
    parser.add_argument("--udp-port", type=int, default=AGG_PORT, help="the worker's own UDP port")
    parser.add_argument("--timeout", type=float, default=0.05, help="first retransmission timeout (s)")
    parser.add_argument("--min-timeout", type=float, default=0.01,
                        help="floor of the adaptive retransmission timeout (s)")
    parser.add_argument("--max-retries", type=int, default=200)
    parser.add_argument("--exponent", type=int, default=None,
                        help="innet: a fixed shared exponent (every call one exchange; runs with spares)")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="innet: write the protocol state here before each call (a spare restores it)")
    parser.add_argument("--resume", type=Path, default=None,
                        help="innet, a spare: the dead rank's checkpoint to continue from")
    parser.add_argument("--cells", type=Path, default=None,
                        help="innet, a spare: the dead worker's cells on its switch (p4ina ctl job replace)")
    parser.add_argument("--peers", default="", help="ring: every rank's IPv4 address, in rank order")
    parser.add_argument("--ring-timeout", type=float, default=120.0, help="ring and gloo: give up after (s)")
    parser.add_argument("--master", default="", help="gloo: rank 0's IPv4 address (its TCP store)")
    parser.add_argument("--ifname", default="", help="gloo: the interface to use (GLOO_SOCKET_IFNAME)")
    parser.add_argument("--port", type=int, default=GLOO_PORT, help="gloo: rank 0's TCP store port")
    return parser.parse_args(argv)


def standby(go: Path, poll: float = 0.002) -> int:
    """A hot-standby spare: everything a worker imports is loaded, then it waits to be told its rank. The runner
    writes the worker's whole argument list (rank, child index, the dead rank's checkpoint and cells) to `go`."""
    import hostagent.codec
    import hostagent.transport
    import hostagent.worker  # noqa: F401 - loaded now, not after the replacement

    while not go.exists():
        time.sleep(poll)
    return main(json.loads(go.read_text()))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["standby"]:
        if len(argv) != 2:
            print("usage: python -m p4fabric.hostproc standby GO_FILE", file=sys.stderr)
            return 2
        return standby(Path(argv[1]))
    args = parse_args(argv)
    if args.mode == "gloo" and not args.master:
        print("p4fabric.hostproc: error: gloo needs --master (rank 0's address)", file=sys.stderr)
        return 2
    out = Output(args.out)
    final: dict[str, Any] = {"done": True, "rank": args.rank, "mode": args.mode}
    try:
        final.update(RUNNERS[args.mode](args, out))
        status = 0
    except Exception as exc:  # reported to the runner in the output file, which puts it in the report
        final.update({"error": f"{type(exc).__name__}: {exc}".splitlines()[0], "exact": False, "within_bound": False,
                      "traceback": traceback.format_exc()})
        status = 1
    out.write(final)
    out.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
