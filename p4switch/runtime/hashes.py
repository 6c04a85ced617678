"""BMv2's hash and checksum algorithms, bit-exact (bm_sim/calculations.cpp).

BMv2 builds the input by writing the fields, most significant bit first, into one bit string and padding the
last byte with zero bits; the algorithm then runs over those bytes. `field_bytes` does the same. Fields of
invalid headers are left out by BMv2, so callers pass only the fields of valid headers.

Algorithms (names as in BMv2's registry and v1model's `HashAlgorithm`):
- `crc16`: CRC-16/ARC (polynomial 0x8005, reflected in and out, init 0, no final xor).
- `crc32`: the CRC-32 of zlib/Ethernet (0x04c11db7, reflected, init and final xor 0xffffffff).
- `crc8_custom`, `crc16_custom`, `crc32_custom`, `crc64_custom`: BMv2's configurable CRCs with BMv2's default
  parameters (crc16/32_custom default to crc16/crc32).
- `crcCCITT`: CRC-16/CCITT-FALSE (0x1021, init 0xffff, not reflected).
- `csum16` (alias `cksum16`): the Internet checksum, the one's complement of the one's complement sum of
  big-endian 16-bit words, an odd tail padded with a zero byte.
- `xor16`, `xor32`: XOR of big-endian 16/32-bit words, the tail padded with zero bytes on the right.
- `identity`: the first (up to) 8 bytes as a big-endian integer.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from p4switch.exceptions import P4SwitchError


class UnknownHashAlgorithm(P4SwitchError):
    """A program asked for a hash algorithm that BMv2 does not have either."""


def field_bytes(fields: Iterable[tuple[int, int]]) -> bytes:
    """Concatenate `(value, width)` pairs MSB first into bytes, zero-padding the last byte as BMv2 does."""
    acc = 0
    nbits = 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        nbits += width
    pad = -nbits % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


def field_packer(widths: tuple[int, ...]) -> Callable[..., bytes]:
    """A function of the field values that returns `field_bytes(zip(values, widths))`, with the shifts and masks
    fixed once (generated straight-line code): for code generators whose field lists are known at build time."""
    nbits = sum(widths)
    pad = -nbits % 8
    nbytes = (nbits + pad) // 8
    terms = []
    shift = pad
    for i in reversed(range(len(widths))):
        terms.append(f"((v{i} & {(1 << widths[i]) - 1}) << {shift})")
        shift += widths[i]
    args = ", ".join(f"v{i}" for i in range(len(widths)))
    body = " | ".join(reversed(terms)) or "0"
    namespace: dict[str, Any] = {}
    exec(f"def pack({args}):\n    return ({body}).to_bytes({nbytes}, 'big')\n", namespace)
    pack: Callable[..., bytes] = namespace["pack"]
    return pack


def _reflect(value: int, nbits: int) -> int:
    out = 0
    for _ in range(nbits):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


@dataclass(frozen=True)
class CrcConfig:
    """BMv2's `crc_config_t`: the parameters of a custom CRC."""

    width: int
    polynomial: int
    initial_remainder: int
    final_xor_value: int
    data_reflected: bool
    remainder_reflected: bool


class Crc:
    """A table-driven CRC computed exactly as BMv2's `crc_custom<T>` does."""

    def __init__(self, config: CrcConfig) -> None:
        self.config = config
        width = config.width
        self._mask = (1 << width) - 1
        self._shift = width - 8
        top = 1 << (width - 1)
        table = []
        for dividend in range(256):
            rem = dividend << (width - 8)
            for _ in range(8):
                rem = ((rem << 1) ^ config.polynomial) if rem & top else (rem << 1)
            table.append(rem & self._mask)
        self._table = tuple(table)
        self._refl8 = tuple(_reflect(b, 8) for b in range(256))

    def __call__(self, data: bytes) -> int:
        c = self.config
        table, mask, shift = self._table, self._mask, self._shift
        rem = c.initial_remainder
        if c.data_reflected:
            refl8 = self._refl8
            for byte in data:
                rem = table[(refl8[byte] ^ (rem >> shift)) & 0xFF] ^ ((rem << 8) & mask)
        else:
            for byte in data:
                rem = table[(byte ^ (rem >> shift)) & 0xFF] ^ ((rem << 8) & mask)
        if c.remainder_reflected:
            rem = _reflect(rem, c.width)
        return rem ^ c.final_xor_value


def _reflected_table(poly_reflected: int) -> tuple[int, ...]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ poly_reflected if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_CRC16_TABLE = _reflected_table(0xA001)


def crc16(data: bytes) -> int:
    """CRC-16/ARC, the same value as BMv2's `crc16` (reflected form, so no per-byte bit reversal)."""
    table = _CRC16_TABLE
    crc = 0
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of `data`, as BMv2's `csum16`/`cksum16`."""
    if len(data) & 1:
        data = data + b"\x00"
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def csum16_groups(*groups: tuple[int, int]) -> int:
    """`csum16(field_bytes(fields))` from the fields packed per run: `(value, width)` pairs, each value already
    the run's fields MSB first (`(0, 0)` for a left-out run). The bit string is zero-padded to whole 16-bit words,
    as field_bytes' byte padding plus csum16's odd-byte padding do; the one's complement sum of its words is the
    number modulo 0xFFFF (2^16 = 1 mod 0xFFFF), in 1..0xFFFF unless every word is zero (RFC 1071's folding), so no
    bytes are built and no words are summed."""
    acc = 0
    nbits = 0
    for value, width in groups:
        acc = (acc << width) | value
        nbits += width
    acc <<= -nbits % 16
    return ~((acc - 1) % 0xFFFF + 1) & 0xFFFF if acc else 0xFFFF


def _xor_words(nbytes: int) -> Callable[[bytes], int]:
    def xor_hash(data: bytes) -> int:
        rem = -len(data) % nbytes
        if rem:
            data = data + b"\x00" * rem
        out = 0
        for i in range(0, len(data), nbytes):
            out ^= int.from_bytes(data[i : i + nbytes], "big")
        return out

    return xor_hash


def identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")


CRC8_CUSTOM_DEFAULT = CrcConfig(8, 0x07, 0x00, 0x00, False, False)
CRC16_CUSTOM_DEFAULT = CrcConfig(16, 0x8005, 0x0000, 0x0000, True, True)
CRC32_CUSTOM_DEFAULT = CrcConfig(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)
CRC64_CUSTOM_DEFAULT = CrcConfig(64, 0x1B, 0, 0, True, True)
CRC_CCITT = CrcConfig(16, 0x1021, 0xFFFF, 0x0000, False, False)


def default_algorithms() -> dict[str, Callable[[bytes], int]]:
    """A fresh registry (custom CRCs are per switch: BMv2 lets the control plane reconfigure them)."""
    return {
        "crc16": crc16,
        "crc32": crc32,
        "crcCCITT": Crc(CRC_CCITT),
        "crc8_custom": Crc(CRC8_CUSTOM_DEFAULT),
        "crc16_custom": Crc(CRC16_CUSTOM_DEFAULT),
        "crc32_custom": Crc(CRC32_CUSTOM_DEFAULT),
        "crc64_custom": Crc(CRC64_CUSTOM_DEFAULT),
        "csum16": csum16,
        "cksum16": csum16,
        "xor16": _xor_words(2),
        "xor32": _xor_words(4),
        "identity": identity,
    }
