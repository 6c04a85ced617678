"""Values per packet (N) as a parameter of the wire protocol: lengths from docs/protocol.md's formula, Scapy layers
that build and dissect any supported N, the codec's frames, and a worker that packs N and refuses another N."""

from __future__ import annotations

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hostagent import protocol as P
from hostagent.codec import ChunkHeaders, Endpoints, build_template, fill_frames, parse_payload
from hostagent.exceptions import JobNotAdmittedError, ProtocolError
from hostagent.transport import Transport
from hostagent.worker import Worker

NS = [32, 64, 256, 2048]


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("fmt, size", [(P.FMT_INT32, 4), (P.FMT_INT16, 2), (P.FMT_INT8, 1)])
def test_lengths_follow_n(n: int, fmt: int, size: int) -> None:
    # Ethernet 14 + IPv4 20 + UDP 8 + aggregation header 24 + N elements
    assert P.frame_len(fmt, n) == 66 + n * size
    assert P.udp_len(fmt, n) == 8 + 24 + n * size
    assert P.ipv4_total_len(fmt, n) == 20 + 8 + 24 + n * size
    assert P.lanes_of(fmt, 24 + n * size) == n


def test_largest_build_fits_a_jumbo_frame() -> None:
    assert P.ipv4_total_len(P.FMT_INT32, 2048) == 8244 <= 9000
    assert P.ipv4_total_len(P.FMT_INT32, 256) <= 1500 < P.ipv4_total_len(P.FMT_INT32, 512)


@pytest.mark.parametrize("n", [0, 48, 100, 4096])
def test_unsupported_n_is_refused(n: int) -> None:
    with pytest.raises(ProtocolError, match="values per packet"):
        P.check_lanes(n)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("fmt", [P.FMT_INT32, P.FMT_INT16, P.FMT_INT8])
def test_scapy_layers_round_trip_n_values(n: int, fmt: int) -> None:
    lo, hi = P.VALUE_RANGE[fmt]
    values = [int(v) for v in np.random.default_rng(n + fmt).integers(lo, hi, n, endpoint=True)]
    frame = bytes(Ether() / IP() / UDP(sport=40000, dport=P.AGG_PORT)
                  / P.agg_layers(values, job_id=3, slot=1, ver=1, seq=9, fmt=fmt, lanes=n))
    assert len(frame) == P.frame_len(fmt, n)
    pkt = Ether(frame + b"\x00" * 4)  # trailing bytes past the UDP length (an FCS, padding) are not values
    assert pkt[P.VALUES_LAYER[fmt]].values == values
    assert pkt[P.AggHeader].csum == sum(values) % 2**32


def test_agg_layers_refuses_a_vector_of_another_n() -> None:
    with pytest.raises(ProtocolError, match="carries 256 values, not 64"):
        P.agg_layers([0] * 64, job_id=1, slot=0, ver=0, seq=0, lanes=256)


@pytest.mark.parametrize("n", [32, 2048])
def test_codec_frames_carry_n_values(n: int) -> None:
    ep = Endpoints()
    template = build_template(ep, P.FMT_INT16, n)
    rows = np.random.default_rng(1).integers(-(2**15), 2**15 - 1, size=(3, n))
    hdr = ChunkHeaders(job_id=5, child=2, step=4, slots=np.arange(3), versions=np.zeros(3, dtype=np.int64),
                       seqs=np.arange(3), exps=np.zeros(3, dtype=np.int64))
    frames = fill_frames(template, P.FMT_INT16, hdr, rows)
    assert frames.shape == (3, P.frame_len(P.FMT_INT16, n))
    for k in range(3):
        pkt = Ether(bytes(frames[k]))
        assert pkt[P.AggValues16].values == [int(v) for v in rows[k]]
        r = parse_payload(bytes(frames[k][P.AGG_OFFSET:]), n)
        assert r is not None and np.array_equal(r.values, rows[k]) and r.checksum_ok
    with pytest.raises(ProtocolError):
        fill_frames(template, P.FMT_INT16, hdr, rows[:, : n // 2])


class _Capture(Transport):
    """Records what a worker sends; answers with canned payloads."""

    def __init__(self, replies: list[bytes] | None = None) -> None:
        self.sent: list[bytes] = []
        self.replies = list(replies or [])

    def send(self, frame: bytes) -> None:
        self.sent.append(bytes(frame))

    def recv(self, timeout: float) -> bytes | None:
        return self.replies.pop(0) if self.replies else None


def test_worker_refuses_a_job_of_another_n() -> None:
    with pytest.raises(ProtocolError, match=r"carries 256 values per packet .* packs 64"):
        Worker(1, 0, n_workers=2, transport=_Capture(), values_per_packet=64, job_values=256)
    with pytest.raises(ProtocolError, match="values per packet"):
        Worker(1, 0, n_workers=2, transport=_Capture(), values_per_packet=100)


def test_worker_packs_n_values_per_packet() -> None:
    """1000 int32 values at N=256: four DATA frames of 256 values (the last zero-padded), in order."""
    cap = _Capture()
    w = Worker(1, 0, n_workers=1, transport=cap, values_per_packet=256, job_values=256, pool_size=8,
               timeout=0.001, max_retries=0, adaptive_timeout=False)
    data = np.arange(1000, dtype=np.int32) - 500
    with pytest.raises(JobNotAdmittedError):  # nobody answers: the point is what went out
        w.allreduce(data)
    first = cap.sent[:4]
    assert [len(f) for f in first] == [P.frame_len(P.FMT_INT32, 256)] * 4
    got = np.concatenate([np.asarray(Ether(f)[P.AggValues32].values) for f in first])
    assert np.array_equal(got[:1000], data) and not got[1000:].any()
    assert [Ether(f)[P.AggHeader].seq for f in first] == [0, 1, 2, 3]


def test_worker_refuses_a_result_of_another_n() -> None:
    """A RESULT for this job's outstanding chunk but with 512 values where the worker packs 256: a clear error,
    never a sum read from the first 256 values."""
    values = [1] * 512
    payload = bytes(P.agg_layers(values, job_id=1, slot=0, ver=0, seq=0, flags=P.FLAG_RESULT, count=1, lanes=512))
    w = Worker(1, 0, n_workers=1, transport=_Capture([payload]), values_per_packet=256, pool_size=8,
               timeout=0.5, max_retries=0, adaptive_timeout=False)
    with pytest.raises(ProtocolError, match="512 values per packet, this worker packs 256"):
        w.allreduce(np.ones(256, dtype=np.int32))
