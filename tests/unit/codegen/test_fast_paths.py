"""The per-packet fast paths behind generated code (issue 17's CPU work): the csum16 of a field list computed from
packed fields (`hashes.csum16_groups`), saturating vector arithmetic with one clip ufunc (`vecops.sat_add/sub`) and
the lane test `vecops.anyof`. Expected values come from RFC 1071's definition, BMv2's documented saturation and
plain Python integers, never from the code under test."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from p4switch.runtime import vecops
from p4switch.runtime.hashes import csum16_groups


def rfc1071(data: bytes) -> int:
    """The Internet checksum as RFC 1071 defines it: pad to 16 bits, add words with end-around carry, complement."""
    if len(data) % 2:
        data += b"\0"
    total = 0
    for (word,) in struct.iter_unpack(">H", data):
        total += word
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def pack(fields: list[tuple[int, int]]) -> bytes:
    """Fields MSB first, the last byte zero-padded: how BMv2 lays out a field list before hashing."""
    acc = nbits = 0
    for value, width in fields:
        acc = (acc << width) | value
        nbits += width
    pad = -nbits % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


def group(fields: list[tuple[int, int]]) -> tuple[int, int]:
    acc = nbits = 0
    for value, width in fields:
        acc = (acc << width) | value
        nbits += width
    return acc, nbits


def test_csum16_of_the_textbook_ipv4_header() -> None:
    # the IPv4 header of the usual worked example (checksum field zeroed); its checksum is 0xB861
    words = [0x4500, 0x0073, 0x0000, 0x4000, 0x4011, 0x0000, 0xC0A8, 0x0001, 0xC0A8, 0x00C7]
    assert csum16_groups(group([(w, 16) for w in words])) == 0xB861
    fields = [(4, 4), (5, 4), (0, 6), (0, 2), (0x73, 16), (0, 16), (2, 3), (0, 13), (0x40, 8), (0x11, 8),
              (0, 16), (0xC0A80001, 32), (0xC0A800C7, 32)]
    assert csum16_groups(group(fields)) == 0xB861


def test_csum16_groups_matches_rfc1071_on_random_field_lists() -> None:
    rng = random.Random(17)
    for _ in range(3000):
        groups: list[tuple[int, int]] = []
        present: list[tuple[int, int]] = []
        for _g in range(rng.randint(0, 4)):
            fields = [(rng.getrandbits(w) if rng.random() < 0.8 else 0, w)
                      for w in (rng.choice([1, 3, 7, 8, 9, 16, 32, 48]) for _ in range(rng.randint(1, 6)))]
            if rng.random() < 0.25:
                groups.append((0, 0))  # a run of an invalid header: left out
                continue
            groups.append(group(fields))
            present += fields
        assert csum16_groups(*groups) == rfc1071(pack(present)), groups


def test_csum16_of_all_zero_and_all_one_words() -> None:
    assert csum16_groups() == 0xFFFF == rfc1071(b"")
    assert csum16_groups((0, 48)) == 0xFFFF
    assert csum16_groups((0xFFFF_FFFF, 32)) == rfc1071(b"\xff" * 4) == 0


@pytest.mark.parametrize("width", [8, 13, 16, 32])
@pytest.mark.parametrize("signed", [False, True])
def test_saturating_add_and_sub_clamp_to_the_type(width: int, signed: bool) -> None:
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    c = 8 if width <= 8 else 16 if width <= 16 else 32
    dtype = np.dtype(f"{'i' if signed else 'u'}{c // 8}")
    rng = np.random.default_rng(width + signed)
    a = rng.integers(lo, hi + 1, 257, dtype=np.int64)
    b = rng.integers(lo, hi + 1, 257, dtype=np.int64)
    a[:4] = [lo, hi, lo, hi]
    b[:4] = [lo, hi, hi, lo]
    av, bv = a.astype(dtype), b.astype(dtype)
    k = int(b[7])
    cases = [
        (vecops.sat_add(av, bv, width, signed, dtype), [min(max(x + y, lo), hi) for x, y in zip(a, b, strict=True)]),
        (vecops.sat_sub(av, bv, width, signed, dtype), [min(max(x - y, lo), hi) for x, y in zip(a, b, strict=True)]),
        (vecops.sat_add(av, k, width, signed, dtype), [min(max(x + k, lo), hi) for x in a]),
        (vecops.sat_add(k, bv, width, signed, dtype), [min(max(k + y, lo), hi) for y in b]),
        (vecops.sat_sub(k, bv, width, signed, dtype), [min(max(k - y, lo), hi) for y in b]),
        (vecops.sat_sub(av, k, width, signed, dtype), [min(max(x - k, lo), hi) for x in a]),
    ]
    for got, want in cases:
        assert got.dtype == dtype
        assert got.tolist() == want


def test_saturating_add_leaves_its_operands_alone() -> None:
    a = np.array([2**31 - 1, -5, 7], dtype=np.int32)
    b = np.array([1, -(2**31), 8], dtype=np.int32)
    before = a.copy(), b.copy()
    assert vecops.sat_add(a, b, 32, True, np.int32).tolist() == [2**31 - 1, -(2**31), 15]
    assert (a == before[0]).all() and (b == before[1]).all()


def test_anyof() -> None:
    assert vecops.anyof(np.zeros(1024, dtype=bool)) is False
    mask = np.zeros(1024, dtype=bool)
    mask[1023] = True
    assert vecops.anyof(mask) is True
    assert vecops.anyof(np.zeros(0, dtype=bool)) is False
