"""Slot, group and job-index pools: first fit, no overlap, refusal without side effects, exact release."""

from __future__ import annotations

import pytest

from controller.exceptions import AdmissionError
from controller.resources import RangePool, ResourceBook, SwitchResources


def test_range_pool_first_fit_and_fragmentation() -> None:
    pool = RangePool(100)
    a = pool.allocate(30)
    b = pool.allocate(30)
    c = pool.allocate(30)
    assert (a, b, c) == (0, 30, 60)
    pool.release(b, 30)
    assert pool.free_count() == 40 and pool.largest_free() == 30
    assert pool.allocate(20) == 30  # reuses the hole
    with pytest.raises(AdmissionError, match="largest free run 10"):
        pool.allocate(15)
    with pytest.raises(AdmissionError, match="overlaps"):
        pool.take(55, 10)


def _book(slots: int = 64, groups: int = 2, jobs: int = 2) -> ResourceBook:
    return ResourceBook(SwitchResources.create(s, slots, groups, jobs) for s in ("a", "b"))


def test_admission_is_all_or_nothing() -> None:
    book = _book()
    book.admit(1, ["a"], 60)
    free_b = book.pools["b"].slots.free_count()
    with pytest.raises(AdmissionError, match="switch a has 4 free slots"):
        book.admit(2, ["a", "b"], 10)
    assert book.pools["b"].slots.free_count() == free_b and 2 not in book.pools["b"].job_ids


def test_groups_and_indices_run_out_with_reasons() -> None:
    book = _book(groups=1, jobs=5)
    g = book.admit(1, ["a", "b"], 1)
    assert g["a"].group == 1 and g["a"].job_idx == 0
    with pytest.raises(AdmissionError, match="no free multicast group"):
        book.admit(2, ["a"], 1)
    book = _book(groups=5, jobs=1)
    book.admit(1, ["a"], 1)
    with pytest.raises(AdmissionError, match="already serves 1 jobs"):
        book.admit(2, ["a"], 1)


def test_release_and_restore_round_trip() -> None:
    book = _book()
    grants = book.admit(7, ["a", "b"], 16)
    book.release(7, grants.values())
    assert book.pools["a"].slots.free_count() == 64 and not book.pools["a"].job_ids
    book.restore(7, grants.values())
    assert book.pools["a"].slots.used == [(0, 16)] and book.pools["a"].indices.used == [(0, 1)]
