"""Chunking pads only the last packet; reassembly is by sequence number, idempotent and order-free."""

from __future__ import annotations

import numpy as np
import pytest

from hostagent.chunking import ChunkPlan, Reassembly


@pytest.mark.parametrize("length,chunks", [(0, 0), (1, 1), (63, 1), (64, 1), (65, 2), (100_000, 1563)])
def test_chunk_counts(length: int, chunks: int) -> None:
    assert ChunkPlan(length, 64).n_chunks == chunks


def test_split_pads_last_chunk_with_zeros() -> None:
    plan = ChunkPlan(65, 64)
    rows = plan.split(np.arange(1, 66, dtype=np.int32))
    assert rows.shape == (2, 64)
    assert rows[1, 0] == 65 and not rows[1, 1:].any()
    assert plan.bounds(1) == (64, 65)


def test_split_rejects_wrong_shape() -> None:
    with pytest.raises(ValueError):
        ChunkPlan(10, 64).split(np.zeros(11))


def test_reassembly_in_any_order_with_duplicates() -> None:
    plan = ChunkPlan(200, 64)
    data = np.arange(200, dtype=np.int64)
    rows = plan.split(data)
    re = Reassembly(plan, np.int64)
    order = [3, 1, 1, 0, 3, 2]
    accepted = [re.accept(i, rows[i]) for i in order]
    assert accepted == [True, True, False, True, False, True]
    assert re.duplicates == 2
    assert re.complete and re.missing() == []
    assert np.array_equal(re.flat(), data)


def test_reassembly_reports_missing_and_ignores_out_of_range() -> None:
    re = Reassembly(ChunkPlan(300, 64), np.int64)
    re.accept(0, np.zeros(64))
    assert not re.accept(99, np.zeros(64))
    assert re.missing() == [1, 2, 3, 4]
    assert not re.complete
