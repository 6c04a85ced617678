"""Helpers for the target test corpus: building input packets and writing expected outputs with don't-care bytes.

Each `tests/target/programs/<name>/case.py` imports these. Expected outputs are computed here by small, readable
Python (never captured from the switch under test).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


def bits(*fields: tuple[int, int]) -> bytes:
    """Pack `(width, value)` pairs MSB-first into bytes (the total width must be a multiple of 8).
    Values are reduced modulo 2**width, so negative numbers give two's complement."""
    total = 0
    acc = 0
    for width, value in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        total += width
    if total % 8:
        raise ValueError(f"fields add up to {total} bits, not a whole number of bytes")
    return acc.to_bytes(total // 8, "big")


def u(width: int, value: int) -> int:
    """`value` wrapped to an unsigned `width`-bit integer (P4 bit<W> arithmetic)."""
    return value & ((1 << width) - 1)


def s(width: int, value: int) -> int:
    """`value` wrapped to a signed `width`-bit integer (P4 int<W> arithmetic), as a Python int."""
    value = u(width, value)
    return value - (1 << width) if value >> (width - 1) else value


def sat_u(width: int, value: int) -> int:
    return max(0, min(value, (1 << width) - 1))


def sat_s(width: int, value: int) -> int:
    return max(-(1 << (width - 1)), min(value, (1 << (width - 1)) - 1))


@dataclass(frozen=True)
class Expect:
    """An expected packet: bytes where `mask` has 0xFF, anything where it has 0x00; `check` may add a predicate."""

    data: bytes
    mask: bytes
    check: Callable[[bytes], bool] | None = None
    note: str = ""

    def matches(self, packet: bytes) -> bool:
        if len(packet) != len(self.data):
            return False
        if any((p ^ d) & m for p, d, m in zip(packet, self.data, self.mask, strict=True)):
            return False
        return self.check is None or self.check(packet)

    def render(self) -> str:
        return "".join(f"{d:02x}" if m else ".." for d, m in zip(self.data, self.mask, strict=True))


def exact(data: bytes) -> Expect:
    return Expect(data, b"\xff" * len(data))


def pattern(text: str, check: Callable[[bytes], bool] | None = None) -> Expect:
    """Hex with `..` for a don't-care byte; whitespace is ignored: `pattern("0a0b .. 0d")`."""
    text = "".join(text.split())
    data = bytearray()
    mask = bytearray()
    for i in range(0, len(text), 2):
        pair = text[i : i + 2]
        if pair == "..":
            data.append(0)
            mask.append(0)
        else:
            data.append(int(pair, 16))
            mask.append(0xFF)
    return Expect(bytes(data), bytes(mask), check)


def dont_care(data: bytes, positions: Iterable[int]) -> Expect:
    """`data` with the given byte offsets not compared."""
    mask = bytearray(b"\xff" * len(data))
    for p in positions:
        mask[p] = 0
    return Expect(data, bytes(mask))


def ones_complement_sum16(data: bytes) -> int:
    """RFC 1071 sum of 16-bit words with end-around carry (odd length padded with a zero byte)."""
    if len(data) % 2:
        data += b"\x00"
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
        total = (total & 0xFFFF) + (total >> 16)
    return total


def csum16(data: bytes) -> int:
    """The Internet checksum (ones' complement of the ones' complement sum)."""
    return ~ones_complement_sum16(data) & 0xFFFF


def crc_reflected(data: bytes, *, width: int, poly: int, init: int, xorout: int) -> int:
    """A bit-by-bit reflected CRC (refin = refout = true), written out rather than table-driven."""
    reflected_poly = int(f"{poly:0{width}b}"[::-1], 2)
    crc = init
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ reflected_poly if crc & 1 else crc >> 1
    return crc ^ xorout


def crc16(data: bytes) -> int:
    """CRC-16/ARC: poly 0x8005, init 0, reflected, no final xor (BMv2's `crc16`)."""
    return crc_reflected(data, width=16, poly=0x8005, init=0, xorout=0)


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3): poly 0x04C11DB7, init and final xor 0xFFFFFFFF, reflected (BMv2's `crc32`)."""
    return crc_reflected(data, width=32, poly=0x04C11DB7, init=0xFFFFFFFF, xorout=0xFFFFFFFF)


def xor16(data: bytes) -> int:
    """XOR of the 16-bit big-endian words (odd length padded with a zero byte)."""
    if len(data) % 2:
        data += b"\x00"
    value = 0
    for i in range(0, len(data), 2):
        value ^= (data[i] << 8) | data[i + 1]
    return value
