"""Block floating point: the documented error bounds hold against float64 sums, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

from hostagent import quantize as Q
from hostagent.exceptions import QuantizationError

N = 4


def _workers(seed: int, scale: float, length: int = 4096) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(length) * scale).astype(np.float32) for _ in range(N)]


def test_guard_bits() -> None:
    assert [Q.guard_bits(n) for n in (1, 2, 3, 4, 5, 8, 9, 32)] == [0, 1, 2, 2, 3, 3, 4, 5]
    with pytest.raises(ValueError):
        Q.guard_bits(0)


@pytest.mark.parametrize("peak", [1e-30, 0.3, 0.5, 1.0, 1.5, 1024.0, 3e20])
def test_block_exponent_is_the_tightest_power_of_two(peak: float) -> None:
    e = Q.block_exponent(np.array([0.0, -peak, peak / 3]))
    assert peak < 2.0**e
    assert peak >= 2.0 ** (e - 1)


def test_block_exponent_refuses_nan_and_inf() -> None:
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(QuantizationError):
            Q.block_exponent(np.array([1.0, bad]))
    assert Q.block_exponent(np.zeros(5)) == Q.ZERO_EXPONENT


@pytest.mark.parametrize("seed,scale", [(0, 1.0), (1, 1e-6), (2, 1e6), (3, 0.01)])
@pytest.mark.parametrize("out", [np.float32, np.float64])
def test_int32_sum_within_documented_bound(seed: int, scale: float, out: type) -> None:
    xs = _workers(seed, scale)
    e = max(Q.block_exponent(x) for x in xs)  # what the agreement round computes
    f = Q.frac_bits(e, N)
    qs = [Q.encode_int32(Q.to_wire(x, f)) for x in xs]
    assert all(np.abs(q).max() <= 2 ** (30 - Q.guard_bits(N)) for q in qs)
    total = np.sum(qs, axis=0)
    assert np.abs(total).max() < 2**31  # the switch's int32 never saturates
    result = Q.from_wire(total, f, out)
    exact = np.sum([x.astype(np.float64) for x in xs], axis=0)
    err = np.abs(result.astype(np.float64) - exact)
    bound = Q.int32_error_bound(e, N, exact, out)
    assert np.all(err <= bound)
    # the bound is meaningful: far below the data's magnitude
    assert bound.max() < 1e-6 * 2.0**e


@pytest.mark.parametrize("bits", [16, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_narrow_sum_within_documented_bound(bits: int, seed: int) -> None:
    xs = _workers(seed, 3.0, 64 * 32)
    e = max(Q.block_exponent(x) for x in xs)
    f = Q.frac_bits(e, N)
    total = np.zeros(64 * 32, dtype=np.int64)
    for x in xs:
        q, shifts = Q.encode_narrow(Q.to_wire(x, f).reshape(-1, 64), bits)
        assert np.abs(q).max() <= 2 ** (bits - 1) - 1
        total += (q << shifts[:, None]).reshape(-1)  # the switch widens to its scale
    result = Q.from_wire(total, f, np.float32)
    exact = np.sum([x.astype(np.float64) for x in xs], axis=0)
    err = np.abs(result.astype(np.float64) - exact)
    assert np.all(err <= Q.narrow_error_bound(e, N, bits, exact, np.float32))
    # narrower is coarser, but int16 still keeps about 4 decimal digits of the peak
    if bits == 16:
        assert err.max() < 2.0**e * 2**-12


def test_narrow_zero_rows_have_zero_shift() -> None:
    q, s = Q.encode_narrow(np.zeros((2, 64)), 8)
    assert not q.any() and not s.any()


def test_int32_clip_is_detected() -> None:
    assert Q.int32_clipped(np.array([2.0**31]))
    assert not Q.int32_clipped(np.array([2.0**30]))
