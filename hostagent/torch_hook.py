"""PyTorch: a DistributedDataParallel communication hook that all-reduces gradient buckets through p4ina.

DDP still owns the process group (it broadcasts the initial parameters and plans the buckets); the hook replaces
only the gradient all-reduce, so any `AllReducer` (the in-network `Worker`, the host ring, the adaptive chooser)
carries the gradients. Usage:

    model = DistributedDataParallel(net)
    model.register_comm_hook(P4inaHookState(reducer, world_size), p4ina_allreduce_hook)

torch is imported lazily so that `hostagent` itself never needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hostagent.adaptive import AllReducer

if TYPE_CHECKING:
    import torch


@dataclass
class P4inaHookState:
    """What the hook needs: the reducer for this rank and the world size (DDP averages gradients)."""

    reducer: AllReducer
    world_size: int
    buckets: int = 0
    bytes_reduced: int = 0


def p4ina_allreduce_hook(state: P4inaHookState, bucket: Any) -> torch.futures.Future[torch.Tensor]:
    """Average `bucket`'s flat gradient over all ranks through `state.reducer`; DDP waits on the returned future."""
    import torch

    tensor = bucket.buffer()
    grads = tensor.detach().cpu().numpy()
    if grads.dtype not in (np.float32, np.float64):
        grads = grads.astype(np.float32)
    summed = state.reducer.allreduce(grads)
    state.buckets += 1
    state.bytes_reduced += int(grads.nbytes)
    tensor.copy_(torch.from_numpy((np.asarray(summed, dtype=np.float64) / state.world_size).astype(grads.dtype)).view_as(tensor))
    fut: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    fut.set_result(tensor)
    return fut


# DDP's register_comm_hook compares the annotations with the objects dist.GradBucket and Future[Tensor]; under
# postponed annotations they are strings, which DDP rejects. Absent annotations are accepted: drop them at run time.
del p4ina_allreduce_hook.__annotations__["bucket"]
del p4ina_allreduce_hook.__annotations__["return"]


def register_p4ina_hook(model: Any, reducer: AllReducer, world_size: int) -> P4inaHookState:
    """Make DDP `model` all-reduce its gradient buckets through `reducer`; returns the hook's state (statistics)."""
    state = P4inaHookState(reducer, world_size)
    model.register_comm_hook(state, p4ina_allreduce_hook)
    return state
