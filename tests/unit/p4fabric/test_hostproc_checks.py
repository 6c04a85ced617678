"""What a `p4ina run` worker process checks and writes: bit-exactness, the quantization bound of int16/int8 for the
exponent the worker used, the per-step and final records, and a real 2-rank gloo run on loopback."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from p4fabric import hostproc
from p4fabric.hostproc import Output, StepData, check, innet_bound, reference, run_steps, tensor

from hostagent import quantize as Q

REPO = Path(__file__).resolve().parents[3]


def test_check_tells_exact_from_within_bound() -> None:
    expected = np.array([10.0, -20.0, 30.0], dtype=np.float32)
    assert check(expected.copy(), expected, None) == {"exact": True, "within_bound": True, "max_abs_error": 0.0,
                                                      "error_bound": 0.0}
    off = expected + np.array([0, 2, 0], dtype=np.float32)
    assert check(off, expected, None)["within_bound"] is False  # no bound: must be bit-equal
    verdict = check(off, expected, np.full(3, 2.0))
    assert verdict == {"exact": False, "within_bound": True, "max_abs_error": 2.0, "error_bound": 2.0}
    assert check(off, expected, np.full(3, 1.5))["within_bound"] is False
    assert check(expected[:2], expected, None)["max_abs_error"] == float("inf")
    assert check(expected.copy(), expected, np.full(3, 0.5)) == {"exact": True, "within_bound": True,
                                                                  "max_abs_error": 0.0, "error_bound": 0.5}


def test_narrow_bound_follows_the_exponent_the_worker_used() -> None:
    expected = reference(1, 4, 0, 256)
    assert innet_bound(SimpleNamespace(last_exponent=10), "int32", 4) is None  # int32 must be exact
    assert innet_bound(SimpleNamespace(last_exponent=None), "int8", 4) is None  # no call yet
    int8 = innet_bound(SimpleNamespace(last_exponent=10), "int8", 4)
    int16 = innet_bound(SimpleNamespace(last_exponent=10), "int16", 4)
    assert int8 is not None and int16 is not None
    assert np.array_equal(int8(expected), Q.narrow_error_bound(10, 4, 8, expected, np.float32, result_bits=8))
    assert np.all(int8(expected) > int16(expected)) and np.all(int16(expected) > 0)


def _args(tmp_path: Path, count: int) -> argparse.Namespace:
    return argparse.Namespace(seed=3, rank=0, world=2, size=100, count=count, out=tmp_path / "r.jsonl")


def test_run_steps_records_each_step_and_the_verdicts(tmp_path: Path) -> None:
    args = _args(tmp_path, 2)
    calls = []

    def allreduce(data: np.ndarray) -> np.ndarray:  # the right sum, 1 off in one element on the second step
        calls.append(data.size)
        if len(calls) == 1:  # warm-up
            return data
        step = len(calls) - 2
        total = reference(args.seed, args.world, step, args.size)
        return total + np.float32(step)

    out = Output(args.out)
    final = run_steps(allreduce, args, out, lambda: lambda expected: np.full(expected.shape, 1.0))
    out.close()
    assert calls == [100, 100, 100]  # the warm-up has the steps' size
    assert final["exact"] is False and final["within_bound"] is True and final["max_abs_error"] == 1.0
    assert len(final["step_seconds"]) == 2
    records = [json.loads(line) for line in args.out.read_text().splitlines()]
    assert [(r["step"], r["exact"], r["within_bound"]) for r in records] == [(0, True, True), (1, False, True)]


def test_step_data_is_made_before_the_steps_within_the_budget(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the budget every step's pair exists before the first is taken (nothing is generated between timed
    steps); past it the pairs are made on demand; the pairs are the same either way."""
    args = _args(tmp_path, 3)
    ahead = StepData(args, range(3))
    assert sorted(ahead.ready) == [0, 1, 2]
    monkeypatch.setattr(hostproc, "PRECOMPUTE_BYTES", 3 * args.size * 8 - 1)
    lazy = StepData(args, range(3))
    assert lazy.ready == {}
    for step in range(3):
        for got in (ahead.take(step), lazy.take(step)):
            assert np.array_equal(got[0], tensor(args.seed, args.rank, step, args.size))
            assert np.array_equal(got[1], reference(args.seed, args.world, step, args.size))
    assert ahead.ready == {}


@pytest.mark.slow
def test_gloo_mode_two_ranks_on_loopback(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    procs = [subprocess.Popen([sys.executable, "-m", "p4fabric.hostproc", "gloo", "--rank", str(rank), "--world", "2",
                               "--size", "1000", "--count", "2", "--out", str(tmp_path / f"g{rank}.jsonl"),
                               "--ip", "127.0.0.1", "--master", "127.0.0.1", "--ifname", "lo", "--port", str(port)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for rank in range(2)]
    try:
        outputs = [p.communicate(timeout=240)[0].decode(errors="replace") for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0], outputs
    for rank in range(2):
        final = json.loads((tmp_path / f"g{rank}.jsonl").read_text().splitlines()[-1])
        assert final["done"] and final["mode"] == "gloo" and final["exact"] and final["within_bound"]
        assert len(final["step_seconds"]) == 2


def test_gloo_without_master_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "p4fabric.hostproc", "gloo", "--rank", "0", "--world", "2",
                             "--size", "10", "--out", str(tmp_path / "g.jsonl"), "--ip", "127.0.0.1"],
                            cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == "p4fabric.hostproc: error: gloo needs --master (rank 0's address)"
