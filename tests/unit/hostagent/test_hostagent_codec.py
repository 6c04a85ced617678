"""Frames filled with numpy are exactly what Scapy dissects; RESULT parsing reads the same bytes back."""

from __future__ import annotations

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hostagent import protocol as P
from hostagent.codec import ChunkHeaders, Endpoints, build_template, fill_frames, mark_retransmission, parse_payload

EP = Endpoints(src_mac="02:00:00:00:00:07", dst_mac="02:00:00:00:aa:bb", src_ip="10.0.0.7", dst_ip="10.0.9.1", udp_port=40007)


@pytest.mark.parametrize("fmt", [P.FMT_INT32, P.FMT_INT16, P.FMT_INT8])
def test_filled_frames_dissect_to_the_intended_fields(fmt: int) -> None:
    lo, hi = P.VALUE_RANGE[fmt]
    rng = np.random.default_rng(fmt)
    values = rng.integers(lo, hi + 1, size=(3, 64))
    hdr = ChunkHeaders(
        job_id=513, child=5, step=0xFFFFFFFE, slots=np.array([0, 1, 0]), versions=np.array([0, 0, 1]),
        seqs=np.array([0, 1, 2]), exps=np.array([-3, 0, 7]),
    )
    frames = fill_frames(build_template(EP, fmt), fmt, hdr, values)
    assert frames.shape == (3, P.frame_len(fmt))
    for k in range(3):
        pkt = Ether(frames[k].tobytes())
        assert pkt[Ether].src == EP.src_mac and pkt[Ether].dst == EP.dst_mac
        ip = pkt[IP]
        assert (ip.src, ip.dst, ip.tos, ip.len) == (EP.src_ip, EP.dst_ip, P.TOS_GRADIENT, P.ipv4_total_len(fmt))
        assert (pkt[UDP].sport, pkt[UDP].dport) == (EP.udp_port, P.AGG_PORT)
        agg = pkt[P.AggHeader]
        assert (agg.job_id, agg.slot, agg.ver, agg.child, agg.seq, agg.step) == (513, hdr.slots[k], hdr.versions[k], 5, k, 0xFFFFFFFE)
        assert (agg.fmt, int(agg.flags), agg.exp, agg.count) == (fmt, 0, hdr.exps[k], 1)
        assert list(pkt[P.VALUES_LAYER[fmt]].values) == values[k].tolist()
        assert agg.csum == P.checksum(values[k])


def test_ip_checksum_of_template_is_valid() -> None:
    raw = build_template(EP, P.FMT_INT32).tobytes()
    ip = IP(raw[14:])
    stored = ip.chksum
    del ip.chksum
    assert IP(bytes(ip)).chksum == stored


def test_parse_payload_round_trip_and_retx_flag() -> None:
    values = np.arange(-32, 32).reshape(1, 64)
    hdr = ChunkHeaders(job_id=9, child=2, step=4, slots=np.array([3]), versions=np.array([1]), seqs=np.array([77]), exps=np.array([-20]))
    frame = fill_frames(build_template(EP, P.FMT_INT16), P.FMT_INT16, hdr, values)[0]
    mark_retransmission(frame)
    r = parse_payload(frame.tobytes()[P.AGG_OFFSET :])
    assert r is not None
    assert (r.job_id, r.slot, r.version, r.child, r.seq, r.step, r.exp, r.fmt) == (9, 3, 1, 2, 77, 4, -20, P.FMT_INT16)
    assert r.flags == P.FLAG_RETX and r.checksum_ok
    assert r.values.tolist() == values[0].tolist()


def test_parse_payload_rejects_short_and_invalid_format() -> None:
    assert parse_payload(b"\x00" * 10) is None
    bad = bytearray(P.AGG_HDR_LEN + 256)
    bad[P.OFF_FMT_FLAGS] = 3 << 6
    assert parse_payload(bytes(bad)) is None
    assert parse_payload(bytes(P.AGG_HDR_LEN + 100)) is None  # int32 header with a truncated vector
