"""The DDP hook averages a gradient bucket through any AllReducer; the example's command line fails clearly.
(The full 4-process training run is in tests/target/test_hostagent_train_switch.py, through the switch.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from hostagent.torch_hook import P4inaHookState, p4ina_allreduce_hook
from hostagent.train_digits import TrainConfig, _batches, main


class FourTimes:
    """Stands for 4 ranks holding the same gradient: the sum is 4x."""

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return array * 4


class Bucket:
    def __init__(self, tensor: Any) -> None:
        self._t = tensor

    def buffer(self) -> Any:
        return self._t


def test_hook_averages_in_place_and_counts() -> None:
    grads = torch.arange(10, dtype=torch.float32)
    state = P4inaHookState(FourTimes(), world_size=4)
    fut = p4ina_allreduce_hook(state, Bucket(grads))
    out = fut.wait()
    assert out is grads and torch.equal(out, torch.arange(10, dtype=torch.float32))
    assert state.buckets == 1 and state.bytes_reduced == 40


def test_hook_is_accepted_by_ddp_annotation_checks() -> None:
    import inspect

    sig = inspect.signature(p4ina_allreduce_hook)
    assert sig.parameters["bucket"].annotation is inspect.Parameter.empty
    assert sig.return_annotation is inspect.Signature.empty


def test_workers_split_the_same_global_batches() -> None:
    cfg = TrainConfig(workers=4, batch_per_worker=16)
    batches = _batches(1437, cfg, epoch=3)
    assert len(batches) == 1437 // 64 and all(len(b) == 64 for b in batches)
    assert len(set(np.concatenate(batches).tolist())) == len(batches) * 64
    assert [b.tolist() for b in _batches(1437, cfg, epoch=3)] == [b.tolist() for b in batches]


def test_unknown_backend_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--backend", "carrier-pigeon"])
    assert "invalid choice" in capsys.readouterr().err


def test_tunnel_backend_needs_an_address(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--backend", "tunnel"]) == 2
    assert "--tunnel HOST:PORT" in capsys.readouterr().err
