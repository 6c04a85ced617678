"""Cutting a flat tensor into fixed-size packet chunks and putting the RESULT chunks back together.

Every packet carries exactly `lanes` values, so the last chunk is zero-padded; zeros are the identity of the sum,
so padding never changes a result. Reassembly is by chunk sequence number and is idempotent: a duplicated or
retransmitted RESULT for a chunk already stored is recognised and dropped, never added twice."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class ChunkPlan:
    """How `length` values map onto packets of `lanes` values each."""

    length: int
    lanes: int

    def __post_init__(self) -> None:
        if self.lanes <= 0:
            raise ValueError(f"lanes must be positive, not {self.lanes}")
        if self.length < 0:
            raise ValueError(f"length must be non-negative, not {self.length}")

    @property
    def n_chunks(self) -> int:
        return -(-self.length // self.lanes)

    def bounds(self, seq: int) -> tuple[int, int]:
        """Start and end (exclusive) of chunk `seq` in the unpadded array."""
        start = seq * self.lanes
        return start, min(start + self.lanes, self.length)

    def split(self, flat: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
        """A (n_chunks, lanes) array of the values, the last row zero-padded. One copy, no per-chunk Python."""
        if flat.ndim != 1 or flat.shape[0] != self.length:
            raise ValueError(f"expected a flat array of {self.length} values, got shape {flat.shape}")
        padded = np.zeros(self.n_chunks * self.lanes, dtype=flat.dtype)
        padded[: self.length] = flat
        return padded.reshape(self.n_chunks, self.lanes)


class Reassembly:
    """Collects RESULT chunks by sequence number into one (n_chunks, lanes) buffer."""

    def __init__(self, plan: ChunkPlan, dtype: npt.DTypeLike) -> None:
        self.plan = plan
        self.rows = np.zeros((plan.n_chunks, plan.lanes), dtype=dtype)
        self.exponents = np.zeros(plan.n_chunks, dtype=np.int32)
        self._have = np.zeros(plan.n_chunks, dtype=bool)
        self._count = 0
        self.duplicates = 0

    def accept(self, seq: int, values: npt.NDArray[np.generic], exponent: int = 0) -> bool:
        """Store chunk `seq`; False (and counted) when it was already stored or is out of range."""
        if not 0 <= seq < self.plan.n_chunks:
            return False
        if self._have[seq]:
            self.duplicates += 1
            return False
        self.rows[seq] = values
        self.exponents[seq] = exponent
        self._have[seq] = True
        self._count += 1
        return True

    def has(self, seq: int) -> bool:
        return bool(self._have[seq])

    @property
    def complete(self) -> bool:
        return self._count == self.plan.n_chunks

    @property
    def received(self) -> int:
        return self._count

    def missing(self) -> list[int]:
        """Sequence numbers not yet received, in order."""
        return [int(i) for i in np.flatnonzero(~self._have)]

    def flat(self) -> npt.NDArray[np.generic]:
        """The reassembled values without the padding of the last chunk."""
        return self.rows.reshape(-1)[: self.plan.length]
