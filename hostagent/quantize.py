"""Block floating point: turning float tensors into integers the switch can add exactly, and back.

The switch sums int32 values "in units of 2**E" (E: the job's scale, set by the controller; docs/protocol.md). A
worker maps a float tensor x onto that integer grid with a power-of-two *tensor scale* f (fraction bits):
w = x * 2**f wire units. All workers of a collective must use the same f, which follows from the *shared exponent*
e (every |x| < 2**e on every worker) and the guard bits G = ceil(log2 n) that keep an n-way sum inside int32:

    f = 30 - G - e        so every |w| <= 2**(30 - G) and |sum w| <= 2**30 (one spare bit for rounding)

int32 format: q = round(w), sent with exp = E. Error of an n-worker sum (rounding, then one float conversion):

    |result - exact_sum| <= n * 2**-(f + 1)  +  eps_out * |exact_sum|       (`int32_error_bound`)

with eps_out = 2**-24 for a float32 result (2**-53 for float64): for n = 4 the first term is 2**(e - 29).

int16/int8 formats: each packet gets its own shift s = max(0, m - (b - 1)) from its largest |w| < 2**m, sends
q = round(w / 2**s) (clipped to +-(2**(b-1) - 1)) with exp = E + s, and the switch shifts it back to units of 2**E.
A contribution is off by at most one unit of its packet, 2**s; s <= 30 - G - (b - 1). If the root requantizes the
RESULT to a narrow format (shift r, floor), add 2**r units. Bound per element (`narrow_error_bound`):

    |result - exact_sum| <= (n * 2**s_max + 2**r) * 2**-f  +  eps_out * |exact_sum|

Saturation never goes unnoticed: the switch flags OVERFLOW and the worker redoes the collective with an agreed
exponent, so a predicted exponent that turns out too small costs time, never correctness.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from hostagent.exceptions import QuantizationError

#: Shared exponent used for an all-zero tensor (any value is exact for zeros; this one keeps f moderate).
ZERO_EXPONENT = 0
#: Shared exponents are clamped to this range so that 2**f stays a finite float64 for any float input.
MIN_EXPONENT, MAX_EXPONENT = -960, 1000


def guard_bits(n_workers: int) -> int:
    """Bits of headroom so that the sum of `n_workers` values of the same bound cannot overflow."""
    if n_workers < 1:
        raise ValueError(f"n_workers must be at least 1, not {n_workers}")
    return math.ceil(math.log2(n_workers)) if n_workers > 1 else 0


def block_exponent(values: npt.NDArray[Any]) -> int:
    """The smallest e with every |value| < 2**e (ZERO_EXPONENT for an all-zero or empty block).

    Raises QuantizationError for NaN or infinity: they have no fixed-point form, and a silently wrong gradient is
    worse than a clear error."""
    if values.size == 0:
        return ZERO_EXPONENT
    return peak_exponent(float(np.max(np.abs(values))))


def peak_exponent(peak: float) -> int:
    """`block_exponent` of a block whose largest |value| is `peak` (NaN or inf: QuantizationError)."""
    if not math.isfinite(peak):
        raise QuantizationError("cannot all-reduce NaN or infinite values")
    if peak == 0.0:
        return ZERO_EXPONENT
    _, exp = math.frexp(peak)  # peak = m * 2**exp with 0.5 <= m < 1, hence peak < 2**exp
    return min(max(exp, MIN_EXPONENT), MAX_EXPONENT)


def frac_bits(shared_exponent: int, n_workers: int) -> int:
    """Tensor scale f for a shared exponent (see the module docstring)."""
    return 30 - guard_bits(n_workers) - shared_exponent


def _pow2(f: int) -> float | None:
    """2.0**f when it is a normal float64 (then x * 2**f is exactly ldexp(x, f): one correctly rounded operation),
    else None. A multiply is ~30x cheaper than numpy's ldexp."""
    return math.ldexp(1.0, f) if -1022 <= f <= 1023 else None


def to_wire(values: npt.NDArray[Any], f: int) -> npt.NDArray[np.float64]:
    """w = x * 2**f, exactly (a power-of-two scale in float64 loses nothing)."""
    scale = _pow2(f)
    if scale is None:
        return np.ldexp(values.astype(np.float64), f)
    return np.multiply(values, scale, dtype=np.float64)


def encode_int32(wire: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Round wire values to integers; values beyond int32 are clipped (the switch then flags OVERFLOW only if the
    sum saturates, which the caller detects; a clip here is reported by `int32_clipped`)."""
    r = np.rint(wire)
    np.clip(r, -(2**31), 2**31 - 1, out=r)
    return r.astype(np.int64)


def row_peaks(values: npt.NDArray[Any], lanes: int) -> npt.NDArray[np.float64]:
    """max |value| of every packet row of `lanes` values (the last row zero-padded), as float64: one pass that
    gives both the tensor's block exponent (their max, NaN if any value is NaN) and each packet's narrow shift."""
    n = -(-values.size // lanes)
    full = values.size // lanes
    peaks = np.zeros(n, dtype=np.float64)
    if full:
        body = values[: full * lanes].reshape(full, lanes)
        peaks[:full] = np.maximum(body.max(axis=1), -body.min(axis=1))  # no |x| temporary; NaN propagates
    if full < n:
        peaks[full] = float(np.max(np.abs(values[full * lanes :])))
    return peaks


def encode_int32_rows(
    values: npt.NDArray[Any], f: int, lanes: int, peak: float | None = None
) -> npt.NDArray[np.int32]:
    """`encode_int32(to_wire(values, f))` cut into packet rows: a (n_chunks, lanes) int32 array, the last row
    zero-padded. One float64 buffer worked in place: what a worker sends, without a copy per step of the way.

    With `peak` (max |values|, as `row_peaks` gives) a float32 tensor whose scaled peak stays below 2**31 - 128
    takes a float32 shortcut with the same integers: x * 2**f is exact in float32 (a power-of-two scale, no
    overflow; a product too small for a normal float32 is below 0.5 and rounds to 0 either way), rint of the same
    value is the same integer, and nothing needs clipping. Half the bytes per pass, and one pass fewer."""
    n = -(-values.size // lanes)
    if (peak is not None and values.dtype == np.float32 and -126 <= f <= 127
            and peak * math.ldexp(1.0, f) < 2.0**31 - 128):
        buf32 = np.empty(n * lanes, dtype=np.float32)
        np.multiply(values, np.float32(math.ldexp(1.0, f)), out=buf32[: values.size])
        buf32[values.size :] = 0
        np.rint(buf32, out=buf32)
        return buf32.astype(np.int32).reshape(n, lanes)
    buf = np.zeros(n * lanes, dtype=np.float64)
    scale = _pow2(f)
    if scale is None:
        buf[: values.size] = np.ldexp(values.astype(np.float64), f)
    else:
        np.multiply(values, scale, out=buf[: values.size], dtype=np.float64)
    np.rint(buf, out=buf)
    np.clip(buf, -(2**31), 2**31 - 1, out=buf)
    return buf.astype(np.int32).reshape(n, lanes)


def int32_clipped(wire: npt.NDArray[np.float64]) -> bool:
    return bool(wire.size) and float(np.max(np.abs(wire))) >= 2.0**31 - 0.5


def encode_narrow(rows: npt.NDArray[np.float64], bits: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per-packet quantization of wire rows to `bits`-bit integers: (values, shifts s, one per row)."""
    if bits not in (8, 16):
        raise ValueError(f"narrow formats are 8 or 16 bits, not {bits}")
    peak = np.max(np.abs(rows), axis=1) if rows.size else np.zeros(rows.shape[0])
    _, m = np.frexp(peak)  # peak < 2**m (m = 0 for a zero row)
    shifts = np.maximum(0, m.astype(np.int64) - (bits - 1))
    top = 2 ** (bits - 1) - 1
    scaled = np.multiply(rows, np.ldexp(1.0, -shifts)[:, None])  # 2**-s (0 <= s <= 30): exact, as ldexp
    q = np.clip(np.rint(scaled, out=scaled), -top, top).astype(np.int64)
    return q, shifts


def encode_narrow_rows(
    values: npt.NDArray[Any], f: int, lanes: int, bits: int, peaks: npt.NDArray[np.float64] | None = None
) -> tuple[npt.NDArray[np.signedinteger], npt.NDArray[np.int64]]:
    """`encode_narrow` of `to_wire(values, f)` cut into packet rows (the last zero-padded), in one pass from the
    tensor: (values as int8/int16 of (n_chunks, lanes), shifts). `peaks`: `row_peaks(values, lanes)`, if known.

    Same integers as the two-step definition: a row's peak of x * 2**f is its peak of |x| times 2**f (exact),
    so the shifts are the same; then x * 2**(f - s) is computed at once, in float32 for a float32 tensor when
    every row's scale 2**(f - s) is a normal float32: the product is exact (it is below 2**(bits - 1), and one
    too small for a normal float32 is below 0.5 and rounds to 0 either way), so rint and the clip see the same
    value as in float64. Otherwise float64, exactly as `encode_narrow`."""
    if bits not in (8, 16):
        raise ValueError(f"narrow formats are 8 or 16 bits, not {bits}")
    n = -(-values.size // lanes)
    if peaks is None:
        peaks = row_peaks(values, lanes)
    scale = _pow2(f)
    wire_peaks = peaks * scale if scale is not None else np.ldexp(peaks, f)
    _, m = np.frexp(wire_peaks)  # as encode_narrow: peak < 2**m (m = 0 for a zero row)
    shifts = np.maximum(0, m.astype(np.int64) - (bits - 1))
    top = 2 ** (bits - 1) - 1
    out_dtype = np.int8 if bits == 8 else np.int16
    f32 = values.dtype == np.float32 and n > 0 and f <= 127 and f - int(shifts.max()) >= -126
    buf = np.empty((n, lanes), dtype=np.float32 if f32 else np.float64)
    flat = buf.reshape(-1)
    if f32:
        row_scale = np.ldexp(np.float32(1.0), (f - shifts).astype(np.int32))  # exact powers of two
    else:
        row_scale = np.ldexp(1.0, -shifts)
        if scale is None:
            flat[: values.size] = np.ldexp(values.astype(np.float64), f)
        else:
            np.multiply(values, scale, out=flat[: values.size], dtype=np.float64)
        values = flat[: values.size]
    if values.size == n * lanes:
        np.multiply(values.reshape(n, lanes), row_scale[:, None], out=buf)
    else:
        flat[: values.size] = values
        flat[values.size :] = 0
        np.multiply(buf, row_scale[:, None], out=buf)
    np.rint(buf, out=buf)
    np.minimum(buf, top, out=buf)
    np.maximum(buf, -top, out=buf)
    return buf.astype(out_dtype), shifts


def from_wire(units: npt.NDArray[np.floating | np.integer], f: int, dtype: npt.DTypeLike) -> npt.NDArray[np.floating]:
    """Floats of summed wire units: exact in float64, then one rounding to `dtype`.

    int32 units to float32 take a shortcut with the same bits: rounding u to float32 first and then scaling by
    2**-f rounds once too, as long as every |u| * 2**-f is a normal float32 (2**-126 <= 2**-f and
    2**31 * 2**-f < 2**128), which holds for the exponents the worker uses."""
    scale = _pow2(-f)
    if np.dtype(dtype) == np.float32 and units.dtype == np.int32 and -96 <= f <= 126:
        return np.multiply(units, np.float32(math.ldexp(1.0, -f)), dtype=np.float32)
    if scale is None:
        return np.ldexp(np.asarray(units, dtype=np.float64), -f).astype(dtype)
    return np.multiply(units, scale, dtype=np.float64).astype(dtype)


def _eps(out_dtype: npt.DTypeLike) -> float:
    return float(np.finfo(np.dtype(out_dtype)).eps) / 2


def int32_error_bound(
    shared_exponent: int, n_workers: int, exact_sum: npt.NDArray[np.floating], out_dtype: npt.DTypeLike
) -> npt.NDArray[np.float64]:
    """Per-element bound on |int32-mode result - exact sum| (see the module docstring)."""
    f = frac_bits(shared_exponent, n_workers)
    return n_workers * 2.0 ** -(f + 1) + _eps(out_dtype) * np.abs(np.asarray(exact_sum, dtype=np.float64))


def narrow_error_bound(
    shared_exponent: int,
    n_workers: int,
    bits: int,
    exact_sum: npt.NDArray[np.floating],
    out_dtype: npt.DTypeLike,
    result_bits: int = 32,
) -> npt.NDArray[np.float64]:
    """Per-element bound on |narrow-mode result - exact sum|, from the largest possible packet shifts."""
    g = guard_bits(n_workers)
    s_max = max(0, 30 - g - (bits - 1))
    r_max = 32 - result_bits if result_bits < 32 else None  # the root's shift: msb (<= 30) + 2 - width
    f = frac_bits(shared_exponent, n_workers)
    units = n_workers * 2.0**s_max + (2.0**r_max if r_max is not None else 0.0)
    return units * 2.0**-f + _eps(out_dtype) * np.abs(np.asarray(exact_sum, dtype=np.float64))
