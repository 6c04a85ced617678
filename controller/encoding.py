"""Canonical P4Runtime byte strings (P4Runtime spec section 8.4) and human value parsing.

P4Runtime carries every field as a big-endian byte string; the canonical form is the shortest one (no leading
zero bytes, zero is one zero byte). BMv2 answers reads in canonical form even when a write used padded bytes, so
the controller always writes canonical strings and compares canonically.
"""

from __future__ import annotations

import ipaddress
import re

from controller.exceptions import EncodingError

_MAC_RE = re.compile(r"^[0-9a-fA-F]{1,2}([:-][0-9a-fA-F]{1,2}){5}$")

Value = int | str | bytes


def encode_int(value: int, bitwidth: int) -> bytes:
    """Canonical bytes of an unsigned `value` that must fit `bitwidth` bits."""
    if value < 0:
        raise EncodingError(f"negative value {value} for an unsigned field of {bitwidth} bits")
    if bitwidth > 0 and value >> bitwidth:
        raise EncodingError(f"value {value} does not fit in {bitwidth} bits")
    if value == 0:
        return b"\x00"
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def decode_int(data: bytes) -> int:
    """Integer value of a (canonical or padded) byte string."""
    return int.from_bytes(data, "big")


def canonical(data: bytes) -> bytes:
    """Strip leading zero bytes, keeping one byte for zero."""
    stripped = data.lstrip(b"\x00")
    return stripped or b"\x00"


def parse_value(value: Value, bitwidth: int) -> int:
    """Turn an int, a dotted IPv4 address, a MAC, an IPv6 address or a 0x/decimal string into an int."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, bytes):
        return decode_int(value)
    text = value.strip()
    try:
        if _MAC_RE.match(text):
            return int("".join(part.zfill(2) for part in re.split(r"[:-]", text)), 16)
        if text.count(".") == 3:
            return int(ipaddress.IPv4Address(text))
        if ":" in text:
            return int(ipaddress.IPv6Address(text))
        return int(text, 0)
    except ValueError as exc:
        raise EncodingError(f"cannot parse {value!r} as a value of {bitwidth} bits") from exc


def encode(value: Value, bitwidth: int) -> bytes:
    """Canonical bytes for a human value of a field of `bitwidth` bits."""
    return encode_int(parse_value(value, bitwidth), bitwidth)


def prefix_mask(prefix_len: int, bitwidth: int) -> int:
    """The mask with the top `prefix_len` of `bitwidth` bits set."""
    if not 0 <= prefix_len <= bitwidth:
        raise EncodingError(f"prefix length {prefix_len} outside 0..{bitwidth}")
    return ((1 << prefix_len) - 1) << (bitwidth - prefix_len)


def format_mac(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


def format_ipv4(value: int) -> str:
    return str(ipaddress.IPv4Address(value))
