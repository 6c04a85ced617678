"""The numpy operations vectorised pipeline code calls (p4switch/codegen/vector.py writes the calls).

Generated modules import this module, never numpy itself, so the audited vocabulary of generated code
(`p4switch/codegen/audit.py`) stays small: dtypes, a handful of array constructors and the BMv2 integer semantics
numpy does not have built in (shifts by the width or more, saturating arithmetic, widths that are not 8/16/32 bits).

Conventions (docs/compiler.md, "The vectoriser"): a lane vector of a `bit<W>`/`int<W>` value (W <= 32) is a 1-D
array of the smallest of uint8/16/32 (int8/16/32 for `int<W>`) holding the value itself: unsigned values in
[0, 2^W), signed ones sign-extended. Packet field runs and register stores hold unsigned bit patterns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# dtype instances, not scalar types: numpy converts a scalar type to its dtype on every `view`/`astype`/`zeros`
# call (about 0.2 us each on this machine's per-packet path)
u8, u16, u32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32)
i8, i16, i32, i64 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64)
bool_ = np.dtype(np.bool_)
where = np.where
zeros = np.zeros
full = np.full

_U: dict[int, np.dtype[Any]] = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32)}
_S: dict[int, np.dtype[Any]] = {8: np.dtype(np.int8), 16: np.dtype(np.int16), 32: np.dtype(np.int32)}
_BE: dict[int, np.dtype[Any]] = {8: np.dtype(">u1"), 16: np.dtype(">u2"), 32: np.dtype(">u4")}
#: the big-endian dtypes a generated emitter casts a field run to (`encode` inlined: one call, no frame)
be8, be16, be32 = _BE[8], _BE[16], _BE[32]


def container(width: int) -> int:
    """Bits of the numpy integer that holds a W-bit value."""
    return 8 if width <= 8 else 16 if width <= 16 else 32


_frombuffer = np.frombuffer


def decode(data: Any, offset: int, count: int, width: int) -> np.ndarray:
    """`count` big-endian W-bit fields starting at byte `offset` of a packet, as a native unsigned array (a copy):
    one `astype` from the big-endian dtype. Header runs usually start at offsets that are not a multiple of the
    word size (aggregate_wide's at byte 50), and there reading native words and `byteswap()`ping them cost more
    than the cast (3.7 against 1.1 us for 1024 words in one timing, 2.2 against 1.9 us over frames no cache held);
    on aligned runs the two were within 10%."""
    if width == 8:
        return _frombuffer(data, _U[8], count, offset).copy()
    return _frombuffer(data, _BE[width], count, offset).astype(_U[width])


def encode(values: np.ndarray, width: int) -> np.ndarray:
    """The wire bytes of a run of W-bit fields: a big-endian copy, which the deparser's `bytes.join` takes as it is
    (a `tobytes()` here would copy the run once more)."""
    return values.astype(_BE[width])


def norm(a: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """Bring a container-width result back to a W-bit value: mask (unsigned) or sign-extend from bit W-1."""
    c = a.dtype.itemsize * 8
    if width == c:
        return a.view(_S[c] if signed else _U[c])
    if signed:
        k = c - width
        return (a.view(_U[c]) << k).view(_S[c]) >> k
    return a.view(_U[c]) & ((1 << width) - 1)


def pattern(a: np.ndarray, width: int) -> np.ndarray:
    """The unsigned W-bit patterns of a lane vector (what a field run or a register store holds)."""
    c = a.dtype.itemsize * 8
    u = a.view(_U[c])
    return u if width == c else u & ((1 << width) - 1)


def value(a: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """Stored unsigned patterns as lane values of `bit<W>` (as they are) or `int<W>` (sign-extended)."""
    if not signed:
        return a
    c = a.dtype.itemsize * 8
    s = a.view(_S[c])
    if width == c:
        return s
    k = c - width
    return (a << k).view(_S[c]) >> k


def sx(v: int, width: int) -> int:
    """An invariant scalar `int<W>` (an unsigned pattern in scalar code) as the number it stands for."""
    s = 1 << (width - 1)
    return (v ^ s) - s


def shl(a: np.ndarray, k: int, width: int, signed: bool) -> np.ndarray:
    """`a << k` for a run-time invariant k: zero when k >= W (BMv2), else the low W bits."""
    if k >= width:
        return np.zeros_like(a)
    c = a.dtype.itemsize * 8
    return norm(a.view(_U[c]) << k, width, signed)


def shr(a: np.ndarray, k: int, width: int, signed: bool) -> np.ndarray:
    """`a >> k`: arithmetic for `int<W>` (k >= W gives 0 or -1), logical for `bit<W>` (k >= W gives 0)."""
    c = a.dtype.itemsize * 8
    if signed:
        return a >> min(k, c - 1)
    if k >= width:
        return np.zeros_like(a)
    return a >> k


try:  # numpy 2 (numpy 1.x: numpy.core)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
    from numpy._core.umath import clip as _clip  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - numpy < 2
    from numpy.core.multiarray import count_nonzero as _count_nonzero  # type: ignore[no-redef]
    from numpy.core.umath import clip as _clip  # type: ignore[no-redef]

_ndarray = np.ndarray
_add, _subtract, _not_equal = np.add, np.subtract, np.not_equal
_xor, _and, _less, _right_shift, _where = np.bitwise_xor, np.bitwise_and, np.less, np.right_shift, np.where
# `sat_add_ovf`'s constants per signed width, as 0-d arrays of the lanes' dtype (see `_LIMITS` for why arrays)
_ZERO: dict[int, np.ndarray] = {w: np.zeros((), _S[w]) for w in (8, 16, 32)}
_TOP: dict[int, tuple[np.ndarray, np.ndarray]] = {
    w: (np.array(w - 1, _S[w]), np.array((1 << (w - 1)) - 1, _S[w])) for w in (8, 16, 32)}

#: whether any lane of a mask is set, for generated `if` tests: `count_nonzero` is one C call (an int, true when
#: some lane is), where `ndarray.any()` goes through numpy's Python-level reduction wrapper and `anyof` adds a frame
count_nonzero = _count_nonzero

# The clamp bounds as 0-d int64 arrays: numpy scalars (or Python ints) as ufunc operands take a slower
# type-resolution path than 0-d arrays (about 0.5 us per call here).
_LIMITS: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {
    (w, s): (np.array(-(1 << (w - 1)) if s else 0, i64), np.array((1 << (w - 1)) - 1 if s else (1 << w) - 1, i64))
    for w in range(1, 33) for s in (False, True)
}


def _wide(a: Any, b: Any, op: Any) -> np.ndarray:
    """`op(a, b)` in a fresh int64 vector: one side cast, the other added in place (cheaper than numpy's mixed-type
    `dtype=` loop); either side may be an invariant scalar. The `out` argument is positional: a keyword argument
    costs the ufunc call about 1 us of argument parsing."""
    if isinstance(a, _ndarray):
        r = a.astype(i64)
        op(r, b, r)
        return r
    if isinstance(b, _ndarray):
        r = b.astype(i64)
        op(a, r, r)
        return r
    return np.asarray(op(a, b, dtype=i64))


def sat_add(a: Any, b: Any, width: int, signed: bool, dtype: Any) -> np.ndarray:
    """`a |+| b` (either side may be an invariant scalar), computed in int64 and clamped to the type's range by the
    clip ufunc in place: `np.clip`'s Python wrapper, or separate minimum/maximum passes, cost more than the
    arithmetic on a few thousand lanes."""
    r = _wide(a, b, _add)
    lo, hi = _LIMITS[width, signed]
    _clip(r, lo, hi, r)
    return r.astype(dtype)


def sat_add_ovf(a: Any, b: Any, width: int, signed: bool, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """`a |+| b` and, per lane, whether it saturated, i.e. whether the clamped sum differs from the exact one. That
    is what the aggregation idiom `if ((bit<W>)sat != a + b) { flag = 1; }` tests: the wrapping sum mod 2^W equals
    the clamped one exactly when nothing was clamped (a clamped sum is off by less than 2^W and by more than 0).
    The vectoriser fuses the two statements into this call (`vector._Emitter.saturation_flag`).

    Two signed lane vectors of the type's own width (the idiom's case) are added in their own dtype, wrapping:
    a lane overflowed exactly when both operands' signs differ from the sum's (`(a ^ s) & (b ^ s)` negative), and
    only when some lane did are those lanes clamped, to the maximum for a non-negative `a`, else the minimum
    (`(a >> W-1) ^ max`). No int64 copies: on 1024 lanes about 1 us less than the int64 sum, clip and compare
    (which any other operands still take)."""
    if (a.__class__ is _ndarray and b.__class__ is _ndarray and signed and a.dtype == dtype
            and b.dtype == dtype and a.dtype.itemsize * 8 == width):
        s = _add(a, b)
        t = _xor(a, s)
        _and(t, _xor(b, s), t)
        m = _less(t, _ZERO[width])
        if _count_nonzero(m):
            shift, top = _TOP[width]
            s = _where(m, _xor(_right_shift(a, shift), top), s)
        return s, m
    r = _wide(a, b, _add)
    lo, hi = _LIMITS[width, signed]
    s = _clip(r, lo, hi)
    return s.astype(dtype), _not_equal(r, s)


_greater_equal = np.greater_equal
# `sat_add_ovf_u`'s constants per width, 0-d arrays of the unsigned container: the sign bit, W-1, the maximum
_SIGN_U: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {
    w: (np.array(1 << (w - 1), _U[w]), np.array(w - 1, _U[w]), np.array((1 << (w - 1)) - 1, _U[w])) for w in (8, 16, 32)}


def sat_add_ovf_u(a: np.ndarray, b: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """`sat_add_ovf` of `(int<W>)a |+| (int<W>)b` for two lane vectors of `bit<W>` patterns in their own unsigned
    container (W = 8, 16, 32: field runs and lane locals as they are), which the vectoriser knows when it emits
    the call (`vector._Emitter.saturation_flag`): no type checks and no signed views of the operands. The unsigned
    add wraps to the same bits as the signed one; a lane overflowed exactly when the sign bit of `(a ^ s) & (b ^ s)`
    is set, and then takes the maximum `2^(W-1) - 1 + (a >> W-1)` (the minimum's pattern for a negative `a`). The
    sum comes back as `int<W>` values (a signed view), with the per-lane mask."""
    s = _add(a, b)
    t = _xor(a, s)
    _and(t, _xor(b, s), t)
    sign, shift, top = _SIGN_U[width]
    m = _greater_equal(t, sign)
    if _count_nonzero(m):
        s = _where(m, _add(_right_shift(a, shift), top), s)
    return s.view(_S[width]), m


def sat_sub(a: Any, b: Any, width: int, signed: bool, dtype: Any) -> np.ndarray:
    """`a |-| b`: clamped at the type's minimum (0 for `bit<W>`) and maximum."""
    r = _wide(a, b, _subtract)
    lo, hi = _LIMITS[width, signed]
    _clip(r, lo, hi, r)
    return r.astype(dtype)


def anyof(mask: np.ndarray) -> bool:
    """Whether any lane of a boolean vector is set: `count_nonzero` is one C call, `ndarray.any` goes through
    numpy's Python-level reduction wrapper (a few times slower on a per-packet path)."""
    return bool(_count_nonzero(mask))


def rsum(a: np.ndarray, mask: np.ndarray | None = None) -> int:
    """Sum of the lanes (of the masked lanes) as a Python int: the caller keeps it mod 2^W."""
    if mask is not None:
        a = a[mask]
    return int(a.sum(dtype=np.int64))


def ror(a: np.ndarray, mask: np.ndarray | None = None) -> int:
    """Bitwise OR of the lanes (of the masked lanes)."""
    if mask is not None:
        a = a[mask]
    return int(np.bitwise_or.reduce(a)) if a.size else 0


def rxor(a: np.ndarray, mask: np.ndarray | None = None) -> int:
    """Bitwise XOR of the lanes (of the masked lanes)."""
    if mask is not None:
        a = a[mask]
    return int(np.bitwise_xor.reduce(a)) if a.size else 0


class RunField:
    """A header field that lives in a numpy run (`o._r<k>[i]`): scalar code reads and writes it as a Python int."""

    __slots__ = ("index", "run")

    def __init__(self, run: str, index: int) -> None:
        self.run, self.index = run, index

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        return int(getattr(obj, self.run)[self.index])

    def __set__(self, obj: Any, v: int) -> None:
        getattr(obj, self.run)[self.index] = v


def run_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return bool((a == b).all())
