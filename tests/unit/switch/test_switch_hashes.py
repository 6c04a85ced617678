"""BMv2's hash algorithms: check values and the hash_csum conformance case's outputs recorded from real BMv2."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from p4switch.runtime.bindings import RuntimeBindings
from p4switch.runtime.hashes import UnknownHashAlgorithm, crc16, crc32, csum16, field_bytes

CASE = Path(__file__).resolve().parents[2] / "conformance" / "cases" / "hash_csum"


def test_check_values() -> None:
    rt = RuntimeBindings(None)
    assert crc16(b"123456789") == 0xBB3D  # CRC-16/ARC
    assert crc32(b"123456789") == 0xCBF43926
    assert rt.hasher("crc16_custom")(b"123456789") == 0xBB3D
    assert rt.hasher("crc32_custom")(b"123456789") == 0xCBF43926
    assert rt.hasher("crcCCITT")(b"123456789") == 0x29B1
    assert rt.hasher("crc8_custom")(b"123456789") == 0xF4
    assert csum16(bytes.fromhex("4500003c1c4640004006" "0000" "ac100a63ac100a0c")) == 0xB1E6


def test_fields_are_concatenated_msb_first_and_zero_padded() -> None:
    assert field_bytes([(0xA, 4), (0xBC, 8)]) == b"\xab\xc0"
    rt = RuntimeBindings(None)
    assert rt.hash("identity", [(0xABC, 12)]) == 0xABC0  # BMv2 pads the bit string, it does not right-align
    assert rt.hash("xor16", [(0x1234, 16), (0xFF, 8)]) == 0x1234 ^ 0xFF00


def test_hash_range_follows_bmv2_base_plus_modulo() -> None:
    rt = RuntimeBindings(None)
    h = rt.hash("crc16", [(1, 32)])
    assert rt.hash_range("crc16", [(1, 32)], 100, 37) == 100 + h % 37
    assert rt.hash_range("crc16", [(1, 32)], 5, 0) == 5


def test_unknown_algorithm() -> None:
    with pytest.raises(UnknownHashAlgorithm):
        RuntimeBindings(None).hash("md5", [(1, 8)])


def test_random_is_seeded_and_in_range() -> None:
    a, b = RuntimeBindings(None, seed=4), RuntimeBindings(None, seed=4)
    xs = [a.random(3, 9) for _ in range(100)]
    assert xs == [b.random(3, 9) for _ in range(100)]
    assert min(xs) >= 3 and max(xs) <= 9 and len(set(xs)) > 3
    assert a.random(7, 7) == 7


def test_log_formats_values() -> None:
    lines: list[str] = []
    RuntimeBindings(None, log_sink=lines.append).log("a={} b={}", (1, 2))
    assert lines == ["a=1 b=2"]


def test_hash_csum_conformance_values_match_bmv2() -> None:
    from p4switch.switch.ports import read_pcap

    rt = RuntimeBindings(None)
    inputs = [f for _, f in read_pcap(CASE / "p0_in.pcap") if f[12:14] == b"\x08\x00"]
    outputs = [f for _, f in read_pcap(CASE / "p1_out.pcap")]
    assert len(inputs) == len(outputs) > 100
    for frame, out in zip(inputs, outputs, strict=True):
        ip = frame[14:34]
        src, dst = int.from_bytes(ip[12:16], "big"), int.from_bytes(ip[16:20], "big")
        proto, ident = ip[9], int.from_bytes(ip[4:6], "big")
        expected = struct.unpack(">HIHHIH", out[34:50])
        got = (
            rt.hash_range("crc16", [(src, 32), (dst, 32), (proto, 8)], 0, 1 << 16),
            rt.hash_range("crc32", [(src, 32), (dst, 32), (proto, 8)], 0, 1 << 32),
            rt.hash_range("csum16", [(src, 32), (dst, 32)], 0, 1 << 16),
            rt.hash_range("xor16", [(src, 32), (dst, 32)], 0, 1 << 16),
            rt.hash_range("identity", [(dst, 32)], 0, 1 << 32),
            rt.hash_range("crc16", [(src, 32), (ident, 16)], 100, 37),
        )
        assert got == expected


def test_field_packer_matches_field_bytes() -> None:
    from p4switch.runtime.hashes import field_packer

    widths = (4, 4, 8, 16, 16, 3, 13, 8, 8, 32, 32)
    values = (4, 5, 0, 60, 1234, 2, 100, 64, 17, 0x0A000901, 0x0A000201)
    pack = RuntimeBindings(None).field_packer(widths)
    assert pack(*values) == field_bytes(zip(values, widths, strict=True))
    assert field_packer((4, 8))(0xA, 0xBC) == b"\xab\xc0"
    assert field_packer((12,))(0x1FFFF) == b"\xff\xf0"  # masked to the width, padded at the end
