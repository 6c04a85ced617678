"""Block floating point: turning float tensors into integers the switch can add exactly, and back.

The switch only adds integers. A float value x is sent as q = round(x * 2**f), where the fraction bits f follow
from a *shared exponent* E (every |x| < 2**E, over all workers) and the number of guard bits G = ceil(log2(n))
that keep the sum of n contributions from overflowing:

    int32 (one exponent per tensor or chunk):  f = 31 - G - E     so |q| < 2**(31 - G) and |sum q| < 2**31

Error bound of an n-worker sum in int32 mode (rounding to nearest, then one float conversion at the end):

    |result - exact_sum| <= n * 2**-(f + 1)  +  eps_out * |exact_sum|

with eps_out = 2**-24 for a float32 result (2**-53 for float64). `sum_error_bound()` computes it; the tests check
it against float64 sums. With n = 4 the first term is 2**(E - 29): about 2e-9 of the largest magnitude.

Narrow modes (int16, int8) trade precision for bytes: every packet carries its own exponent e (the block of that
packet only), q = round(x * 2**(b - 1 - e)) clipped to +-(2**(b-1) - 1), so each value has error at most
2**(e - b) and a sum of n at most n * 2**(e_max - b) where e_max is the largest exponent of that chunk among the
workers (`narrow_error_bound()`). The switch widens and aligns narrow values to the slot's scale before adding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hostagent.exceptions import QuantizationError

#: Exponent used for an all-zero block: any value works, this one keeps the scale well inside int32.
ZERO_EXPONENT = -126
#: Range of exponents a header field of one signed byte can carry.
MIN_EXPONENT, MAX_EXPONENT = -128, 127


def guard_bits(n_workers: int) -> int:
    """Bits of headroom so that the sum of `n_workers` values of the same bound cannot overflow."""
    if n_workers < 1:
        raise ValueError(f"n_workers must be at least 1, not {n_workers}")
    return math.ceil(math.log2(n_workers)) if n_workers > 1 else 0


def block_exponent(values: npt.NDArray[np.floating]) -> int:
    """The smallest E with every |value| < 2**E (ZERO_EXPONENT for an all-zero or empty block).

    Raises QuantizationError for NaN or infinity: they have no fixed-point form, and a silent wrong gradient is
    worse than a clear error."""
    if values.size == 0:
        return ZERO_EXPONENT
    peak = float(np.max(np.abs(values)))
    if not math.isfinite(peak):
        raise QuantizationError("cannot quantize NaN or infinite values")
    if peak == 0.0:
        return ZERO_EXPONENT
    _, exp = math.frexp(peak)  # peak = m * 2**exp with 0.5 <= m < 1, hence peak < 2**exp
    return max(exp, ZERO_EXPONENT)


def row_exponents(rows: npt.NDArray[np.floating]) -> npt.NDArray[np.int32]:
    """`block_exponent` of every row of a 2-D array at once (one exponent per packet)."""
    peak = np.max(np.abs(rows), axis=1) if rows.size else np.zeros(rows.shape[0])
    if not np.all(np.isfinite(peak)):
        raise QuantizationError("cannot quantize NaN or infinite values")
    _, exps = np.frexp(peak)
    exps = np.where(peak == 0.0, ZERO_EXPONENT, np.maximum(exps, ZERO_EXPONENT))
    return exps.astype(np.int32)


@dataclass(frozen=True)
class Int32Scale:
    """The int32 fixed-point scale of one block for an n-worker sum: q = round(x * 2**frac_bits)."""

    exponent: int
    n_workers: int

    @property
    def frac_bits(self) -> int:
        return 31 - guard_bits(self.n_workers) - self.exponent

    def encode(self, values: npt.NDArray[np.floating]) -> npt.NDArray[np.int32]:
        """Fixed-point int32 of `values`; raises when a value reaches 2**exponent (the shared bound is wrong)."""
        scaled = np.rint(np.ldexp(values.astype(np.float64), self.frac_bits))
        limit = float(2 ** (31 - guard_bits(self.n_workers)))
        if scaled.size and float(np.max(np.abs(scaled))) > limit:
            raise QuantizationError(f"value beyond the shared exponent 2**{self.exponent}")
        return scaled.astype(np.int32)

    def decode(self, sums: npt.NDArray[np.integer], dtype: npt.DTypeLike = np.float32) -> npt.NDArray[np.floating]:
        """Floats of summed fixed-point values (exact in float64, then one rounding to `dtype`)."""
        return np.ldexp(sums.astype(np.float64), -self.frac_bits).astype(dtype)


def sum_error_bound(
    exponent: int, n_workers: int, exact_sum: npt.NDArray[np.floating] | float, out_dtype: npt.DTypeLike
) -> npt.NDArray[np.floating]:
    """Per-element bound on |int32-mode result - exact sum| (see the module docstring)."""
    scale = Int32Scale(exponent, n_workers)
    eps_out = float(np.finfo(np.dtype(out_dtype)).eps) / 2
    return np.asarray(n_workers * 2.0 ** -(scale.frac_bits + 1) + eps_out * np.abs(exact_sum), dtype=np.float64)


# -- narrow formats: one exponent per packet ----------------------------------------------------------------------


def narrow_dtype(bits: int) -> np.dtype[np.signedinteger]:
    if bits == 16:
        return np.dtype(np.int16)
    if bits == 8:
        return np.dtype(np.int8)
    raise ValueError(f"narrow formats are 8 or 16 bits, not {bits}")


def encode_narrow(
    rows: npt.NDArray[np.floating], bits: int
) -> tuple[npt.NDArray[np.signedinteger], npt.NDArray[np.int32]]:
    """Quantize each row (one packet) to `bits`-bit integers with its own exponent: (values, exponents).

    q = round(x * 2**(bits - 1 - e)) clipped to +-(2**(bits-1) - 1): the clip only ever moves a value that rounded
    up to exactly 2**(bits-1), by less than one unit, so the error bound still holds."""
    exps = row_exponents(rows)
    shift = (bits - 1) - exps.astype(np.int64)
    scaled = np.rint(np.ldexp(rows.astype(np.float64), shift[:, None]))
    top = 2 ** (bits - 1) - 1
    return np.clip(scaled, -top, top).astype(narrow_dtype(bits)), exps


def decode_scaled(values: npt.NDArray[np.integer], exponents: npt.NDArray[np.integer], bits: int) -> npt.NDArray[np.float64]:
    """Floats of integer rows that carry `bits`-bit fixed point with per-row exponents (inverse of encode_narrow
    for a sum as long as the switch returns the same scale)."""
    shift = exponents.astype(np.int64) - (bits - 1)
    return np.ldexp(values.astype(np.float64), shift[:, None])


def narrow_error_bound(max_exponent: int, n_workers: int, bits: int) -> float:
    """Bound on |narrow-mode sum - exact sum| per element for a chunk whose largest worker exponent is given.

    Each contribution is off by at most half a unit of its own scale, 2**(e - bits), and e <= max_exponent; the
    switch aligns every contribution to the largest scale, which can truncate once more by one unit."""
    return n_workers * 2.0 ** (max_exponent - bits) + n_workers * 2.0 ** (max_exponent - (bits - 1))
