"""Issue 5, "Must show": int8 and int16 modes. Narrow contributions with a per-packet exponent are widened and
aligned to the job's scale in the switch; RESULTs are requantized with a shift chosen from the data. Results stay
within the documented error bound of the float sum (docs/protocol.md, "Quantization"); overflow saturates and is
flagged."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
from aggnet import DROP_BAD_FORMAT, Fabric, SimWorker, running_fabric, single_switch

from hostagent import protocol as proto

SCALE = -16  # the job's scale exponent E
WIDTH = {proto.FMT_INT16: 16, proto.FMT_INT8: 8}


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    yield from running_fabric()


def quantize(x: np.ndarray, fmt: int, floor_exp: int) -> tuple[np.ndarray, int]:
    """Block floating point as a worker does it: the smallest exponent (>= the job's scale) that fits the block."""
    lo, hi = proto.VALUE_RANGE[fmt]
    m = float(np.max(np.abs(x)))
    e = floor_exp if m == 0 else max(floor_exp, math.ceil(math.log2(m / hi)))
    q = np.clip(np.round(x / 2.0**e), lo, hi).astype(np.int64)
    return q, e


def switch_model(qs: list[np.ndarray], exps: list[int], result_fmt: int) -> tuple[np.ndarray, int]:
    """What the switch computes: align to 2^SCALE, sum, and (narrow results) round to the shift the data needs."""
    total = np.zeros(proto.VALUES_PER_PACKET, dtype=np.int64)
    for q, e in zip(qs, exps, strict=True):
        total += q << (e - SCALE)
    if result_fmt == proto.FMT_INT32:
        return total, SCALE
    mag = 0
    for v in total:
        mag |= int(~v if v < 0 else v)
    msb = mag.bit_length() - 1
    shift = max(0, msb + 2 - WIDTH[result_fmt]) if mag else 0
    half = (1 << shift) >> 1
    return np.minimum((total + half) >> shift, proto.VALUE_RANGE[result_fmt][1]), SCALE + shift


@pytest.mark.parametrize(("in_fmt", "result_fmt"), [
    (proto.FMT_INT8, proto.FMT_INT8),
    (proto.FMT_INT8, proto.FMT_INT32),
    (proto.FMT_INT16, proto.FMT_INT16),
    (proto.FMT_INT16, proto.FMT_INT8),
    (proto.FMT_INT32, proto.FMT_INT16),
])
def test_quantized_modes_within_error_bound(fabric: Fabric, in_fmt: int, result_fmt: int) -> None:
    rng = np.random.default_rng(in_fmt * 10 + result_fmt)
    n_workers, n_chunks = 3, 6
    floats = [[rng.normal(0, 1, 64) * 10.0 ** rng.uniform(-3, 1) for _ in range(n_chunks)] for _ in range(n_workers)]
    workers = []
    for r in range(n_workers):
        pairs = [quantize(x, in_fmt, SCALE) for x in floats[r]]
        workers.append(SimWorker(name=f"q{r}", rank=r, child=r, job_id=3, pool=2, fmt=in_fmt,
                                 chunks=[q for q, _ in pairs], exps=[e for _, e in pairs]))
    single_switch(workers, fabric=fabric, job_id=3, scale=SCALE, result_fmt=result_fmt)
    fabric.run()
    for k in range(n_chunks):
        qs = [w.chunks[k] for w in workers]
        exps = [w.exps[k] for w in workers if w.exps is not None]
        want, want_exp = switch_model(qs, exps, result_fmt)
        exact = sum(floats[r][k] for r in range(n_workers))
        # Workers round (error <= half a step each); so does the switch when it requantizes (half a step of the
        # result, a whole one for an element clamped at the format's maximum).
        bound = sum(2.0 ** (e - 1) for e in exps) + (2.0**want_exp if result_fmt != proto.FMT_INT32 else 0.0)
        for w in workers:
            res = w.results[k]
            assert res.fmt == result_fmt and res.exp == want_exp
            assert np.array_equal(res.values, want), f"chunk {k}: switch differs from the model"
            assert not res.flags & (proto.FLAG_OVERFLOW | proto.FLAG_CORRUPT)
            got = res.values.astype(np.float64) * 2.0**res.exp
            assert np.all(np.abs(got - exact) <= bound + 1e-12), f"chunk {k}: error above the documented bound"
            lo, hi = proto.VALUE_RANGE[result_fmt]
            assert res.values.min() >= lo and res.values.max() <= hi


def test_sum_overflow_saturates_and_is_flagged(fabric: Fabric) -> None:
    big = np.full(64, 2**30, dtype=np.int64)
    big[1::2] = -(2**30)
    big[2] = 5
    workers = [SimWorker(name=f"o{r}", rank=r, child=r, job_id=4, pool=1, chunks=[big.copy()]) for r in range(3)]
    single_switch(workers, fabric=fabric, job_id=4)
    fabric.run()
    for w in workers:
        res = w.results[0]
        assert res.flags & proto.FLAG_OVERFLOW
        assert res.values[0] == 2**31 - 1 and res.values[1] == -(2**31) and res.values[2] == 15


def test_alignment_overflow_saturates_and_is_flagged(fabric: Fabric) -> None:
    """An int8 element shifted up to the job's scale that does not fit int32 is clamped, not wrapped."""
    q = np.zeros(64, dtype=np.int64)
    q[0], q[1], q[2] = 100, -100, 1
    workers = [SimWorker(name=f"a{r}", rank=r, child=r, job_id=5, pool=1, fmt=proto.FMT_INT8, chunks=[q.copy()],
                         exps=[SCALE + 28]) for r in range(2)]
    single_switch(workers, fabric=fabric, job_id=5, scale=SCALE)
    fabric.run()
    for w in workers:
        res = w.results[0]
        assert res.flags & proto.FLAG_OVERFLOW
        assert res.values[0] == 2**31 - 1 and res.values[1] == -(2**31) and res.values[2] == 2 << 28


def test_exponent_below_the_scale_is_refused(fabric: Fabric) -> None:
    q = np.ones(64, dtype=np.int64)
    w = SimWorker(name="e", rank=0, child=0, job_id=6, pool=1, fmt=proto.FMT_INT8, chunks=[q], exps=[SCALE - 1])
    single_switch([w], fabric=fabric, job_id=6, scale=SCALE)
    fabric.switches["s1"].inject(1, w.frame(0))
    assert not fabric.in_flight
    assert fabric.switches["s1"].drops(0, DROP_BAD_FORMAT) == 1


def test_requantization_rounds_to_nearest_and_clamps(fabric: Fabric) -> None:
    """Sums chosen around rounding ties and just under the int8 maximum after the shift."""
    q = np.zeros(64, dtype=np.int64)
    q[0], q[1], q[2], q[3], q[4] = 255, 254, -255, 253, -256  # magnitude OR: msb 7 -> shift 1 for int8
    w = SimWorker(name="r", rank=0, child=0, job_id=7, pool=1, chunks=[q])
    single_switch([w], fabric=fabric, job_id=7, result_fmt=proto.FMT_INT8)
    fabric.run()
    res = w.results[0]
    assert res.exp == 1
    # 255/2 = 127.5 rounds up to 128 and is clamped to 127; 254 -> 127; -255/2 = -127.5 -> -127; 253 -> 127 (126.5
    # rounds up); -256 -> -128.
    assert res.values[:5].tolist() == [127, 127, -127, 127, -128]
