"""The one check every all-reduce front door makes on its input, so all backends refuse the same things the same way."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from hostagent.exceptions import ArrayTypeError

#: dtypes an all-reduce accepts: floats go through block floating point, int32 is summed exactly (mod 2**32).
SUPPORTED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32))


def check_array(array: object) -> npt.NDArray[np.generic]:
    """Return `array` as a C-contiguous numpy array of a supported dtype, or raise ArrayTypeError saying why."""
    if not isinstance(array, np.ndarray):
        raise ArrayTypeError(f"all-reduce takes a numpy array, not {type(array).__name__}")
    if array.dtype not in SUPPORTED_DTYPES:
        names = ", ".join(str(d) for d in SUPPORTED_DTYPES)
        raise ArrayTypeError(f"all-reduce supports {names} arrays, not {array.dtype}")
    return np.ascontiguousarray(array)
