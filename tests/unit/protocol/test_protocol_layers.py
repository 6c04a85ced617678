"""The wire protocol's two views agree: Scapy layers (build, dissect, bind_layers) and the hot-path constants
(struct format, numpy dtype, offsets, lengths) describe the same bytes as docs/protocol.md."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hostagent import protocol as P
from hostagent.exceptions import ProtocolError


def _frame(fmt: int, values: list[int], **kw: int) -> bytes:
    fields = {"job_id": 7, "slot": 300, "ver": 1, "seq": 123456, "child": 17}
    fields.update(kw)
    return bytes(Ether() / IP() / UDP(sport=40001, dport=P.AGG_PORT) / P.agg_layers(values, fmt=fmt, **fields))


@pytest.mark.parametrize("fmt", [P.FMT_INT32, P.FMT_INT16, P.FMT_INT8])
def test_build_dissect_round_trip(fmt: int) -> None:
    lo, hi = P.VALUE_RANGE[fmt]
    values = list(np.linspace(lo, hi, P.VALUES_PER_PACKET).astype(np.int64))
    raw = _frame(fmt, values, exp=-5, flags=P.FLAG_RETX | P.FLAG_OVERFLOW, count=3, step=9)
    assert len(raw) == P.frame_len(fmt)
    pkt = Ether(raw)
    hdr = pkt[P.AggHeader]
    assert (hdr.job_id, hdr.slot, hdr.ver, hdr.seq, hdr.child, hdr.exp, hdr.count, hdr.step) == (
        7, 300, 1, 123456, 17, -5, 3, 9)
    assert hdr.fmt == fmt
    assert hdr.flags == P.FLAG_RETX | P.FLAG_OVERFLOW
    assert isinstance(hdr.payload, P.VALUES_LAYER[fmt])
    assert hdr.payload.values == values
    assert hdr.csum == P.checksum(values)
    assert pkt[IP].len == P.ipv4_total_len(fmt) and pkt[UDP].len == P.udp_len(fmt)
    assert f"job={7}" in hdr.mysummary() and "DATA" in hdr.mysummary()


def test_struct_dtype_and_offsets_match_the_layer() -> None:
    values = list(range(-32, 32))
    raw = _frame(P.FMT_INT32, values, exp=-3, flags=P.FLAG_RESULT, count=4, step=2)
    fields = P.AGG_HDR_STRUCT.unpack_from(raw, P.AGG_OFFSET)
    assert fields == (7, 300, P.pack_fmt_flags(P.FMT_INT32, P.FLAG_RESULT), P.pack_ver_child(1, 17), -3, 0, 4, 0,
                      123456, 2, P.checksum(values))
    rec = np.frombuffer(raw, dtype=P.AGG_HDR_DTYPE, count=1, offset=P.AGG_OFFSET)[0]
    assert rec["slot"] == 300 and rec["exp"] == -3 and rec["csum"] == P.checksum(values)
    assert struct.unpack_from("!I", raw, P.AGG_OFFSET + P.OFF_SEQ)[0] == 123456
    assert struct.unpack_from("!H", raw, P.AGG_OFFSET + P.OFF_COUNT)[0] == 4
    vec = np.frombuffer(raw, dtype=P.VALUE_DTYPE[P.FMT_INT32], count=64, offset=P.VALUES_OFFSET)
    assert vec.tolist() == values
    assert P.AGG_HDR_DTYPE.itemsize == P.AGG_HDR_LEN == 24


def test_template_built_without_scapy_dissects() -> None:
    """What a worker's hot path does: patch a template with struct and numpy; Scapy reads it back."""
    template = bytearray(_frame(P.FMT_INT8, [0] * 64))
    values = np.arange(-64, 64, 2, dtype=np.int8)
    P.AGG_HDR_STRUCT.pack_into(template, P.AGG_OFFSET, 9, 2, P.pack_fmt_flags(P.FMT_INT8, 0), P.pack_ver_child(0, 3),
                               4, 0, 1, 0, 77, 1, P.checksum(values))
    template[P.VALUES_OFFSET:] = values.astype(P.VALUE_DTYPE[P.FMT_INT8]).tobytes()
    hdr = Ether(bytes(template))[P.AggHeader]
    assert (hdr.job_id, hdr.slot, hdr.child, hdr.exp, hdr.seq) == (9, 2, 3, 4, 77)
    assert hdr.payload.values == values.tolist()


def test_result_binds_on_source_port() -> None:
    """RESULTs go to the worker's own port, from AGG_PORT: they dissect too."""
    raw = bytes(Ether() / IP() / UDP(sport=P.AGG_PORT, dport=40001)
                / P.agg_layers([1] * 64, job_id=1, slot=0, ver=0, seq=0, flags=P.FLAG_RESULT))
    hdr = Ether(raw)[P.AggHeader]
    assert hdr.flags & P.FLAG_RESULT and "RESULT" in hdr.mysummary()
    other = Ether(bytes(Ether() / IP() / UDP(sport=1, dport=2) / (b"x" * 10)))
    assert not other.haslayer(P.AggHeader)


def test_checksum_is_linear_mod_2_32() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(-(2**31), 2**31, 64)
    b = rng.integers(-(2**31), 2**31, 64)
    assert (P.checksum(a) + P.checksum(b)) % 2**32 == P.checksum(a + b)
    assert P.checksum([-1]) == 0xFFFFFFFF


def test_bad_vectors_are_refused() -> None:
    with pytest.raises(ProtocolError):
        P.agg_layers([0] * 63, job_id=1, slot=0, ver=0, seq=0)
    with pytest.raises(ProtocolError):
        P.agg_layers([128] + [0] * 63, job_id=1, slot=0, ver=0, seq=0, fmt=P.FMT_INT8)


def test_lengths_table() -> None:
    assert [P.frame_len(f) for f in (P.FMT_INT32, P.FMT_INT16, P.FMT_INT8)] == [322, 194, 130]
    assert P.AGG_OFFSET == 42 and P.VALUES_OFFSET == 66
