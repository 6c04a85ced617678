"""The corpus' expected outputs are computed by casekit, independently of our switch; its hash and checksum
functions are checked here against real BMv2 output (tests/conformance/cases/hash_csum, made by BMv2 1.15.5)."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "programs"
CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
sys.path.insert(0, str(PROGRAMS))

from casekit import bits, crc16, crc32, csum16, pattern, s, sat_s, sat_u, u, xor16  # noqa: E402
from test_programs import read_output  # noqa: E402


def test_crc_check_values() -> None:
    assert crc32(b"123456789") == zlib.crc32(b"123456789") == 0xCBF43926
    assert crc16(b"123456789") == 0xBB3D  # CRC-16/ARC check value
    assert csum16(bytes.fromhex("450000730000400040110000c0a80001c0a800c7")) == 0xB861  # RFC 1071 example header


def test_hashes_agree_with_real_bmv2() -> None:
    outputs = read_output(CONFORMANCE / "cases" / "hash_csum" / "p1_out.pcap")
    assert outputs
    for out in outputs:
        ip = out[14:34]
        src, dst, proto, ident = ip[12:16], ip[16:20], ip[9:10], ip[4:6]
        hs = out[34:54]
        assert int.from_bytes(hs[0:2], "big") == crc16(src + dst + proto)
        assert int.from_bytes(hs[2:6], "big") == crc32(src + dst + proto)
        assert int.from_bytes(hs[6:8], "big") == csum16(src + dst)
        assert int.from_bytes(hs[8:10], "big") == xor16(src + dst)
        assert int.from_bytes(hs[10:14], "big") == int.from_bytes(dst, "big")
        assert int.from_bytes(hs[14:16], "big") == 100 + crc16(src + ident) % 37


def test_integer_helpers() -> None:
    assert bits((4, 0xA), (12, 0xBCD)) == b"\xab\xcd"
    assert bits((8, -1)) == b"\xff"
    assert (u(8, 256 + 5), s(8, 0x80), s(8, 127), sat_u(8, 300), sat_u(8, -3), sat_s(8, 200)) == (5, -128, 127, 255, 0, 127)
    p = pattern("0a .. 0c")
    assert p.matches(b"\x0a\x99\x0c") and not p.matches(b"\x0b\x99\x0c") and not p.matches(b"\x0a\x99")
