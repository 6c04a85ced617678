"""The gloo baseline: 2 processes on loopback sum int32 exactly and float32 as torch does; absent torch is clear."""

from __future__ import annotations

import multiprocessing as mp
import socket
from typing import Any

import numpy as np

from hostagent.gloo import GlooAllReduce


def _rank(rank: int, port: int, out: Any) -> None:
    g = GlooAllReduce(rank, 2, "127.0.0.1", port, timeout=60)
    try:
        ints = g.allreduce(np.arange(10, dtype=np.int32) * (rank + 1))
        floats = g.allreduce(np.full((2, 3), 0.5 * (rank + 1), dtype=np.float32))
        out.put((rank, ints.tolist(), str(ints.dtype), floats.tolist(), str(floats.dtype)))
    finally:
        g.close()


def test_gloo_allreduce_two_processes() -> None:
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "hostagent.gloo"])
    out = ctx.Queue()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    procs = [ctx.Process(target=_rank, args=(r, port, out), daemon=True) for r in range(2)]
    for p in procs:
        p.start()
    try:
        results = sorted(out.get(timeout=240) for _ in procs)
    finally:
        for p in procs:
            p.join(timeout=30)
    for _rank_id, ints, idt, floats, fdt in results:
        assert ints == (np.arange(10) * 3).tolist() and idt == "int32"
        assert floats == [[1.5] * 3] * 2 and fdt == "float32"
