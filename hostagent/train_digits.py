"""Data-parallel training example: a small MLP on scikit-learn's bundled digits, N workers, gradients through p4ina.

    python -m hostagent.train_digits --workers 4 --epochs 40 --backend ring

Each worker is a process running DistributedDataParallel with the p4ina communication hook. Every step, the
workers take disjoint quarters of the same global batch, so the averaged gradient equals the single-process
gradient of the whole batch: the data-parallel model must reach the single-process accuracy (within 1 percentage
point, up to quantization and summation order), which this script checks by training both.

Backends: `ring` (the host ring over TCP, runs anywhere) and `tunnel` (the in-network `Worker` through an
embedded switch reached via a frame tunnel, see `hostagent.tunnel`; the caller starts the switch). Without torch
or scikit-learn the script says what to install and exits non-zero.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from hostagent.exceptions import HostAgentError


@dataclass(frozen=True)
class TrainConfig:
    workers: int = 4
    epochs: int = 40
    batch_per_worker: int = 16
    lr: float = 0.05
    hidden: int = 64
    seed: int = 0
    backend: str = "ring"
    tunnel: str = ""  # host:port of a frame tunnel for the `tunnel` backend
    job: int = 1
    first_port: int = 1  # switch port of rank 0 for the `tunnel` backend (rank r uses first_port + r)
    udp_base: int = 41000  # UDP port of rank 0's RESULTs (rank r: udp_base + r), as installed in agg_neighbors
    pool: int = 32  # the job's slot pool size
    scale: int = 0  # the job's scale exponent E
    timeout: float = 0.25  # first retransmission timeout of the in-network worker (DDP ranks share the CPU)


@dataclass
class TrainResult:
    single_accuracy: float
    parallel_accuracy: float
    difference_pp: float
    workers: int
    epochs: int
    backend: str
    single_seconds: float
    parallel_seconds: float
    buckets_per_worker: int
    retransmissions: int


def load_digits_split(seed: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """Digits (1797 8x8 images, shipped inside scikit-learn: no download), standardized, 80/20 split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    x = (data.data / 16.0).astype(np.float32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, data.target, test_size=0.2, random_state=seed, stratify=data.target)
    mean, std = x_tr.mean(axis=0), x_tr.std(axis=0) + 1e-6
    return ((x_tr - mean) / std).astype(np.float32), y_tr.astype(np.int64), ((x_te - mean) / std).astype(np.float32), y_te.astype(np.int64)


def _model(cfg: TrainConfig) -> Any:
    import torch

    torch.manual_seed(cfg.seed)
    return torch.nn.Sequential(torch.nn.Linear(64, cfg.hidden), torch.nn.ReLU(), torch.nn.Linear(cfg.hidden, 10))


def _batches(n: int, cfg: TrainConfig, epoch: int) -> list[npt.NDArray[np.int64]]:
    """The global batches of one epoch: the same on every worker (shared seed), the ragged tail dropped."""
    order = np.random.default_rng(cfg.seed * 1000 + epoch).permutation(n)
    size = cfg.batch_per_worker * cfg.workers
    return [order[i : i + size] for i in range(0, n - size + 1, size)]


def _accuracy(model: Any, x: npt.NDArray[np.float32], y: npt.NDArray[np.int64]) -> float:
    import torch

    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(dim=1).numpy()
    return float((pred == y).mean())


def train_single(cfg: TrainConfig) -> tuple[float, float]:
    """Single-process reference on the whole global batch; returns (test accuracy, seconds)."""
    import torch

    x_tr, y_tr, x_te, y_te = load_digits_split(cfg.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as each rank does: a model this small only loses time to intra-op threads
    model = _model(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    start = time.perf_counter()
    for epoch in range(cfg.epochs):
        for idx in _batches(len(x_tr), cfg, epoch):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x_tr[idx])), torch.from_numpy(y_tr[idx]))
            loss.backward()
            opt.step()
    seconds = time.perf_counter() - start
    torch.set_num_threads(threads)
    return _accuracy(model, x_te, y_te), seconds


def _make_reducer(cfg: TrainConfig, rank: int) -> tuple[Any, Callable[[], int]]:
    """The AllReducer of this rank and a function reporting its retransmissions (0 for the ring)."""
    import torch.distributed as dist

    if cfg.backend == "ring":
        from hostagent.ring import RingAllReduce

        ring = RingAllReduce(rank, cfg.workers)
        addr = ring.listen("127.0.0.1", 0)
        addrs: list[Any] = [None] * cfg.workers
        dist.all_gather_object(addrs, addr)
        ring.connect([tuple(a) for a in addrs])
        return ring, lambda: 0
    if cfg.backend == "tunnel":
        from hostagent.codec import Endpoints
        from hostagent.tunnel import TunnelTransport
        from hostagent.worker import Worker

        host, _, port = cfg.tunnel.rpartition(":")
        udp = cfg.udp_base + rank
        transport = TunnelTransport((host, int(port)), switch_port=cfg.first_port + rank, udp_port=udp)
        worker = Worker(cfg.job, rank, n_workers=cfg.workers, transport=transport, pool_size=cfg.pool,
                        scale_exp=cfg.scale, endpoints=Endpoints(udp_port=udp), timeout=cfg.timeout)
        return worker, lambda: worker.stats.retransmissions
    raise HostAgentError(f"unknown backend {cfg.backend!r} (ring, tunnel)")


def _rank_main(rank: int, cfg: TrainConfig, rendezvous_port: int, results: Any) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from hostagent.torch_hook import register_p4ina_hook

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{rendezvous_port}", rank=rank, world_size=cfg.workers)
    try:
        x_tr, y_tr, x_te, y_te = load_digits_split(cfg.seed)
        reducer, retrans = _make_reducer(cfg, rank)
        model = DistributedDataParallel(_model(cfg))
        state = register_p4ina_hook(model, reducer, cfg.workers)
        opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
        b = cfg.batch_per_worker
        start = time.perf_counter()
        for epoch in range(cfg.epochs):
            for idx in _batches(len(x_tr), cfg, epoch):
                mine = idx[rank * b : (rank + 1) * b]
                opt.zero_grad()
                # mean over the local quarter; the hook averages over workers: together the global-batch mean
                out = model(torch.from_numpy(x_tr[mine]))
                loss = torch.nn.functional.cross_entropy(out, torch.from_numpy(y_tr[mine]))
                loss.backward()
                opt.step()
        seconds = time.perf_counter() - start
        results.put((rank, _accuracy(model.module, x_te, y_te), seconds, state.buckets, retrans()))
        close = getattr(reducer, "close", None)
        if close is not None:
            close()
    except Exception as exc:  # reported to the parent as one line; a worker's traceback helps no one there
        results.put((rank, f"{type(exc).__name__}: {exc}", 0.0, 0, 0))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def train_parallel(cfg: TrainConfig, timeout: float = 600.0) -> tuple[float, float, int, int]:
    """Run `cfg.workers` DDP processes; returns (rank 0 accuracy, seconds, buckets per worker, retransmissions)."""
    # forkserver: the server imports torch once and forks every rank from a thread-free process, so ranks start
    # fast and never inherit the caller's threads (a switch, a tunnel) the way plain fork would.
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "sklearn.datasets", "hostagent.train_digits"])
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_rank_main, args=(r, cfg, port, results), daemon=True) for r in range(cfg.workers)]
    for p in procs:
        p.start()
    got: dict[int, tuple[Any, float, int, int]] = {}
    try:
        deadline = time.monotonic() + timeout
        while len(got) < cfg.workers:
            rank, acc, secs, buckets, retr = results.get(timeout=max(deadline - time.monotonic(), 0.1))
            if isinstance(acc, str):
                raise HostAgentError(f"worker {rank} failed: {acc}")
            got[rank] = (acc, secs, buckets, retr)
    except Exception as exc:
        if isinstance(exc, HostAgentError):
            raise
        raise HostAgentError(f"training workers did not finish within {timeout:.0f} s") from None
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
    accs = {got[r][0] for r in got}
    if len(accs) != 1:
        raise HostAgentError(f"workers disagree after training (accuracies {sorted(accs)}): gradients diverged")
    return got[0][0], max(g[1] for g in got.values()), got[0][2], sum(g[3] for g in got.values())


def run(cfg: TrainConfig) -> TrainResult:
    single, single_s = train_single(cfg)
    parallel, par_s, buckets, retrans = train_parallel(cfg)
    return TrainResult(
        single_accuracy=single,
        parallel_accuracy=parallel,
        difference_pp=round(abs(single - parallel) * 100, 3),
        workers=cfg.workers,
        epochs=cfg.epochs,
        backend=cfg.backend,
        single_seconds=round(single_s, 3),
        parallel_seconds=round(par_s, 3),
        buckets_per_worker=buckets,
        retransmissions=retrans,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hostagent.train_digits", description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-per-worker", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", choices=("ring", "tunnel"), default="ring")
    ap.add_argument("--tunnel", default="", help="host:port of the switch's frame tunnel (backend tunnel)")
    ap.add_argument("--job", type=int, default=1)
    ap.add_argument("--first-port", type=int, default=1, help="switch port of rank 0 (backend tunnel)")
    ap.add_argument("--udp-base", type=int, default=41000, help="UDP port of rank 0's RESULTs (backend tunnel)")
    ap.add_argument("--pool", type=int, default=32, help="the job's slot pool size (backend tunnel)")
    ap.add_argument("--scale", type=int, default=0, help="the job's scale exponent (backend tunnel)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    if args.backend == "tunnel" and not re.fullmatch(r"[^:\s]+:\d+", args.tunnel):
        print("error: --backend tunnel needs --tunnel HOST:PORT (the switch's frame tunnel)", file=sys.stderr)
        return 2
    try:
        import sklearn  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        print(f"error: the training example needs torch and scikit-learn ({exc.name} is missing): pip install 'p4ina[torch]'", file=sys.stderr)
        return 2
    cfg = TrainConfig(
        workers=args.workers, epochs=args.epochs, batch_per_worker=args.batch_per_worker, lr=args.lr,
        seed=args.seed, backend=args.backend, tunnel=args.tunnel, job=args.job, first_port=args.first_port,
        udp_base=args.udp_base, pool=args.pool, scale=args.scale,
    )
    try:
        result = run(cfg)
    except HostAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(asdict(result), indent=2))
    else:
        print(
            f"{cfg.workers} workers ({cfg.backend}), {cfg.epochs} epochs: data-parallel accuracy "
            f"{result.parallel_accuracy:.4f} vs single-process {result.single_accuracy:.4f} "
            f"(difference {result.difference_pp:.2f} pp); {result.buckets_per_worker} buckets per worker, "
            f"{result.parallel_seconds:.1f} s"
        )
    return 0 if result.difference_pp <= 1.0 else 3


if __name__ == "__main__":
    sys.exit(main())
