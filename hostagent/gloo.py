"""Baseline: torch.distributed's gloo all-reduce, on the same hosts, with the same call shape as the others.

A real collective library is the honest yardstick for both the in-network path and the home-made ring. torch is
optional: importing this module works without it, `GlooAllReduce` raises a clear error when torch is absent.
One process holds one gloo group (torch's rule), so this backend is for multi-process runs.
"""

from __future__ import annotations

import time
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from hostagent.exceptions import HostAgentError, NoRouteError
from hostagent.validate import check_array


def torch_available() -> bool:
    try:
        import torch.distributed as dist
    except ImportError:
        return False
    return bool(dist.is_available())


class GlooAllReduce:
    """One rank of a gloo process group reached through `tcp://master_addr:master_port`."""

    def __init__(self, rank: int, world_size: int, master_addr: str, master_port: int, *, timeout: float = 60.0) -> None:
        if not torch_available():
            raise HostAgentError("the gloo baseline needs torch (pip install 'p4ina[torch]')")
        import torch.distributed as dist

        self.rank = rank
        self.world_size = world_size
        self.seconds = 0.0
        self.calls = 0
        try:
            dist.init_process_group(
                "gloo",
                init_method=f"tcp://{master_addr}:{master_port}",
                rank=rank,
                world_size=world_size,
                timeout=timedelta(seconds=timeout),
            )
        except (RuntimeError, ValueError) as exc:
            raise NoRouteError(f"rank {rank}: cannot join the gloo group at {master_addr}:{master_port}: {exc}") from None

    def allreduce(self, array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
        import torch
        import torch.distributed as dist

        arr = check_array(array)
        start = time.perf_counter()
        tensor = torch.from_numpy(arr.copy())
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return np.asarray(tensor.numpy(), dtype=arr.dtype).reshape(arr.shape)

    def close(self) -> None:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
