"""The worker's batch helpers give exactly what the one-at-a-time definitions give: quantization against
`np.ldexp` (the definition w = x * 2**f), burst parsing against `struct` (`parse_payload`), row checksums against
`protocol.checksum`, reused frame buffers against fresh ones, and burst receives against the datagrams sent."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.codec import (
    ChunkHeaders,
    Endpoints,
    build_template,
    fill_frames,
    header_view,
    parse_payload,
    row_checksums,
    values_view,
)
from hostagent.congestion import CongestionWindow
from hostagent.exceptions import ProtocolError
from hostagent.perf import EchoSwitch
from hostagent.transport import UdpTransport
from hostagent.window import RttEstimator, SlotVersions, SlotWindow
from hostagent.worker import Worker


def _floats(seed: int, size: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size) * 2.0 ** rng.integers(-30, 30, size)
    x[rng.integers(0, size, 5)] = 0.0
    return x


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("f", [-1100, -1000, -40, -3, 0, 7, 29, 300, 1000, 1050])
def test_to_wire_and_from_wire_equal_ldexp(f: int) -> None:
    x = _floats(f & 0xFFFF, 4000)
    assert np.array_equal(Q.to_wire(x.astype(np.float32), f), np.ldexp(x.astype(np.float32).astype(np.float64), f))
    units = np.random.default_rng(1).integers(-(2**40), 2**40, 4000)
    for dtype in (np.float32, np.float64):
        ref = np.ldexp(units.astype(np.float64), -f).astype(dtype)
        assert np.array_equal(Q.from_wire(units, f, dtype), ref, equal_nan=True)


@pytest.mark.parametrize("f", [-200, -97, -96, -40, 0, 20, 60, 126, 127, 150])
def test_from_wire_int32_to_float32_rounds_once(f: int) -> None:
    rng = np.random.default_rng(f & 0xFFFF)
    units = np.concatenate([rng.integers(-(2**31), 2**31, 20000), rng.integers(-300, 300, 2000),
                            [-(2**31), 2**31 - 1, 2**24 + 1, -(2**24) - 3, 1, -1, 0]]).astype(np.int32)
    with np.errstate(over="ignore", under="ignore"):  # the large f: float32 overflows to inf, on both sides
        ref = np.ldexp(units.astype(np.float64), -f).astype(np.float32)
        assert np.array_equal(Q.from_wire(units, f, np.float32), ref)


@pytest.mark.parametrize(("size", "lanes", "f"), [(1, 64, 20), (1000, 64, 25), (4096, 1024, 10), (5000, 2048, 40)])
def test_encode_int32_rows_equals_the_elementwise_definition(size: int, lanes: int, f: int) -> None:
    x = _floats(size, size).astype(np.float32)
    ref = np.clip(np.rint(np.ldexp(x.astype(np.float64), f)), -(2**31), 2**31 - 1).astype(np.int64)
    rows = Q.encode_int32_rows(x, f, lanes)
    n = -(-size // lanes)
    assert rows.shape == (n, lanes) and rows.dtype == np.int32
    assert np.array_equal(rows.reshape(-1)[:size], ref)
    assert not rows.reshape(-1)[size:].any()
    assert np.array_equal(Q.encode_int32(Q.to_wire(x, f)), ref)


def test_encode_narrow_equals_ldexp_definition() -> None:
    rows = np.ldexp(_floats(3, 64 * 50), 12).reshape(50, 64)
    q, shifts = Q.encode_narrow(rows, 8)
    ref = np.clip(np.rint(np.ldexp(rows, -shifts[:, None])), -127, 127).astype(np.int64)
    assert np.array_equal(q, ref)


def _frames(fmt: int, n: int, lanes: int, seed: int) -> tuple[np.ndarray, np.ndarray, ChunkHeaders]:
    lo, hi = P.VALUE_RANGE[fmt]
    rng = np.random.default_rng(seed)
    values = rng.integers(lo, hi + 1, size=(n, lanes))
    seqs = np.arange(n)
    hdr = ChunkHeaders(job_id=300 + seed, child=3, step=0xFFFFFFF0 + seed, slots=seqs % 7, versions=(seqs // 7) & 1,
                       seqs=seqs, exps=rng.integers(-128, 128, n))
    return fill_frames(build_template(Endpoints(), fmt, lanes), fmt, hdr, values), values, hdr


@pytest.mark.parametrize("fmt", [P.FMT_INT32, P.FMT_INT16, P.FMT_INT8])
def test_fill_frames_into_a_dirty_buffer_equals_a_fresh_fill(fmt: int) -> None:
    fresh, values, hdr = _frames(fmt, 9, 256, 1)
    dirty = np.random.default_rng(9).integers(0, 256, size=fresh.shape, dtype=np.uint8)
    again = fill_frames(build_template(Endpoints(), fmt, 256), fmt, hdr, values, out=dirty)
    assert again is dirty
    assert np.array_equal(again, fresh)


@pytest.mark.parametrize("fmt", [P.FMT_INT32, P.FMT_INT16, P.FMT_INT8])
@pytest.mark.parametrize("lanes", [64, 1024])
def test_burst_views_equal_per_packet_parsing(fmt: int, lanes: int) -> None:
    frames, values, _ = _frames(fmt, 17, lanes, 2)
    frames[[3, 8], P.AGG_OFFSET + P.OFF_FMT_FLAGS] |= P.FLAG_RESULT | P.FLAG_OVERFLOW
    frames[5, -1] ^= 1  # a corrupted value: its checksum no longer holds
    payloads = [frames[k, P.AGG_OFFSET :].tobytes() for k in range(17)]
    length = len(payloads[0])
    buf = b"".join(payloads)
    head = header_view(buf, length)
    vals = values_view(buf, length, fmt, lanes)
    sums = row_checksums(vals)
    assert head.shape == (17,) and vals.shape == (17, lanes)
    for k, p in enumerate(payloads):
        r = parse_payload(p, lanes)
        assert r is not None
        assert head["job_id"][k] == r.job_id and head["slot"][k] == r.slot and head["seq"][k] == r.seq
        assert head["step"][k] == r.step and head["exp"][k] == r.exp and head["count"][k] == r.count
        assert head["fmt_flags"][k] >> 6 == r.fmt and head["fmt_flags"][k] & 0x3F == r.flags
        assert head["ver_child"][k] >> 7 == r.version and head["ver_child"][k] & 0x1F == r.child
        assert np.array_equal(vals[k], r.values)
        assert (sums[k] == head["csum"][k]) == r.checksum_ok == (k != 5)
        assert sums[k] == P.checksum(r.values)
    assert np.array_equal(vals[np.arange(17) != 5], values[np.arange(17) != 5])


def test_values_view_refuses_payloads_too_short_for_the_format() -> None:
    with pytest.raises(ProtocolError):
        values_view(bytes(2 * (P.AGG_HDR_LEN + 100)), P.AGG_HDR_LEN + 100, P.FMT_INT32, 64)


def test_udp_recv_many_drains_every_waiting_datagram_in_order() -> None:
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    t = UdpTransport("127.0.0.1", local_port=0, bind_addr="127.0.0.1", agg_port=peer.getsockname()[1])
    try:
        peer.connect(t.sock.getsockname())
        assert t.recv_many(0.0) == []
        sent = [bytes([k & 0xFF]) * (30 + k) for k in range(150)]  # more than one recvmmsg call holds
        for d in sent:
            peer.send(d)
        got: list[bytes] = []
        while len(got) < len(sent):
            burst = t.recv_many(1.0)
            assert burst, "a datagram sent on loopback never came"
            got.extend(burst)
        assert got == sent
        assert t.recv_many(0.0) == []
    finally:
        t.close()
        peer.close()


@pytest.mark.parametrize("lanes", [256, 1024, 2048])
def test_worker_float_allreduce_is_the_elementwise_quantization(lanes: int) -> None:
    """One worker through an instant echo switch: the result is x quantized at the agreed exponent and back,
    element by element as the module's definition says (np.ldexp, np.rint), bit for bit."""
    x = _floats(lanes, 3 * lanes + 5).astype(np.float32)
    w = Worker(1, 0, n_workers=1, transport=EchoSwitch(), pool_size=4, values_per_packet=lanes)
    for exponent in (Q.block_exponent(x), Q.block_exponent(x) - 3):  # the second clips the largest values
        f = Q.frac_bits(exponent, 1)
        units = np.clip(np.rint(np.ldexp(x.astype(np.float64), f)), -(2**31), 2**31 - 1)
        ref = np.ldexp(units, -f).astype(np.float32)
        assert np.array_equal(w.allreduce(x, exponent=exponent), ref)
    assert w.stats.packets_sent == w.stats.packets_received == 2 * 4
    assert w.stats.ignored == w.stats.duplicates == w.stats.checksum_failures == 0


def test_try_complete_is_expects_then_complete() -> None:
    """Two windows fed the same RESULTs, one through `expects` + `complete`, one through `try_complete`, send the
    same packets and end in the same state; a RESULT the window does not expect changes nothing."""
    clock_t = [0.0]

    def make() -> SlotWindow:
        return SlotWindow(40, SlotVersions(8), timeout=0.05, max_retries=50, clock=lambda: clock_t[0],
                          rtt=RttEstimator(0.05), congestion=CongestionWindow(8, min_window=2))

    a, b = make(), make()
    live = a.start()
    assert b.start() == live
    rng = np.random.default_rng(5)
    for _ in range(3000):
        clock_t[0] += float(rng.uniform(0, 0.002))
        if rng.random() < 0.05:  # a duplicate of an earlier RESULT
            s = live[int(rng.integers(0, len(live)))]
            slot, seq, version = s.slot, s.seq, s.version
        elif rng.random() < 0.8:  # a RESULT of a chunk in flight, in a random order
            flying = [s for s in live if a.expects(s.slot, s.seq, s.version)]
            s = flying[int(rng.integers(0, len(flying)))]
            slot, seq, version = s.slot, s.seq, s.version
        else:  # stale or forged
            slot, seq, version = int(rng.integers(0, 8)), int(rng.integers(0, 40)), int(rng.integers(0, 2))
        expected = a.complete(slot, seq, version) if a.expects(slot, seq, version) else None
        assert b.try_complete(slot, seq, version) == expected
        live += expected or []
        if rng.random() < 0.05:
            clock_t[0] += 0.1
            due = a.expired()
            assert b.expired() == due
            live += due
        if a.finished:
            break
    assert a.finished and b.finished
    assert a.missing() == b.missing() == [] and a.retransmissions == b.retransmissions > 0
    assert a.versions.bits == b.versions.bits


class _Recorder(EchoSwitch):
    """Records what a worker queues instead of answering it."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []

    def send(self, frame: object) -> None:
        self.sent.append(bytes(frame))  # type: ignore[call-overload]


def _reference(w: Worker, window: SlotWindow, payloads: list[bytes], n: int, step: int,
               rows: dict[int, np.ndarray]) -> bool:
    """The acceptance rules of docs/protocol.md one payload at a time with `parse_payload` (the worker's code
    before bursts), storing the units per chunk in `rows`; True when an accepted RESULT flagged OVERFLOW."""
    overflow = False
    for p in payloads:
        w.stats.packets_received += 1
        r = parse_payload(p, w.lanes)
        if r is None or r.job_id != w.job or not r.flags & P.FLAG_RESULT or r.step != step:
            w.stats.ignored += 1
            continue
        assert len(p) == P.AGG_HDR_LEN + P.values_len(r.fmt, w.lanes)
        if not window.expects(r.slot, r.seq, r.version):
            if 0 <= r.seq < n and r.seq in rows:
                w.stats.duplicates += 1
            else:
                w.stats.ignored += 1
            continue
        assert r.count == w.n_workers
        if not r.flags & P.FLAG_OVERFLOW and (r.flags & P.FLAG_CORRUPT or not r.checksum_ok):
            w.stats.checksum_failures += 1
            retry = window.retry_now(r.slot)
            if retry is not None:
                w.transport.send_later(b"%d" % retry.seq)
            continue
        overflow = overflow or bool(r.flags & P.FLAG_OVERFLOW)
        rows[r.seq] = r.values.astype(np.int64) << (r.exp - w.scale_exp)
        for s in window.complete(r.slot, r.seq, r.version):
            w.transport.send_later(b"%d" % s.seq)
    return overflow


@pytest.mark.parametrize("seed", range(6))
def test_collector_bursts_equal_the_per_payload_rules(seed: int) -> None:
    """Random bursts of RESULTs with duplicates, other jobs' and steps' packets, DATA, corrupt and OVERFLOW
    RESULTs, shifted exponents and odd lengths: the collector keeps the same counts, sends the same chunks and
    stores the same sums as the per-payload reference."""
    from hostagent.collect import ResultCollector

    rng = np.random.default_rng(seed)
    lanes, n, pool, job, step = 64, 30, 6, 5, 9
    vals = rng.integers(-(2**24), 2**24, size=(n, lanes))
    seqs = np.arange(n)
    template = build_template(Endpoints(), P.FMT_INT32, lanes)

    def payload(seq: int, *, flags: int = P.FLAG_RESULT, job_id: int = job, stp: int = step, exp: int = 0,
                corrupt: bool = False) -> bytes:
        hdr = ChunkHeaders(job_id=job_id, child=0, step=stp, slots=np.array([seq % pool]),
                           versions=np.array([(seq // pool) & 1]), seqs=np.array([seq]), exps=np.array([exp]))
        f = fill_frames(template, P.FMT_INT32, hdr, vals[seq : seq + 1] >> exp)[0]
        f[P.AGG_OFFSET + P.OFF_FMT_FLAGS] |= flags
        f[P.AGG_OFFSET + P.OFF_COUNT + 1] = 1
        if corrupt:
            f[-1] ^= 4
        return f[P.AGG_OFFSET :].tobytes()

    clock_t = [0.0]
    made = []
    for _ in range(2):
        rec = _Recorder()
        w = Worker(job, 0, n_workers=1, transport=rec, pool_size=pool, values_per_packet=lanes,
                   clock=lambda: clock_t[0])
        win = SlotWindow(n, w.versions, timeout=0.05, max_retries=50, clock=lambda: clock_t[0], rtt=w.rtt,
                         congestion=CongestionWindow(pool, min_window=2))
        made.append((w, rec, win))
    (wa, reca, wina), (wb, recb, winb) = made
    frames = fill_frames(template, P.FMT_INT32, ChunkHeaders(job_id=job, child=0, step=step, slots=seqs % pool,
                         versions=(seqs // pool) & 1, seqs=seqs, exps=np.zeros(n, dtype=np.int64)), vals)
    col = ResultCollector(wb, winb, frames, n, step)
    in_flight = [s.seq for s in wina.start()]
    assert [s.seq for s in winb.start()] == in_flight
    ref_rows: dict[int, np.ndarray] = {}
    answered: list[int] = []
    overflowed = False
    while not wina.finished:
        clock_t[0] += 0.001
        burst = []
        clean = rng.random() < 0.4  # a long burst of plain RESULTs (duplicates are plain too): the vectorised path
        for _ in range(int(rng.integers(8, 20)) if clean else int(rng.integers(1, 12))):
            u = rng.random() * (0.62 if clean else 1.0)
            seq = int(rng.choice(in_flight)) if in_flight else int(rng.integers(0, n))
            if u < 0.55:
                burst.append(payload(seq))
            elif u < 0.62 and answered:
                burst.append(payload(int(rng.choice(answered))))  # duplicate
            elif u < 0.67:
                burst.append(payload(seq, job_id=job + 1))
            elif u < 0.72:
                burst.append(payload(seq, stp=step - 1))
            elif u < 0.76:
                burst.append(payload(seq, flags=0))  # DATA, not a RESULT
            elif u < 0.82:
                burst.append(payload(seq, corrupt=True))
            elif u < 0.86:
                burst.append(payload(seq, flags=P.FLAG_RESULT | P.FLAG_CORRUPT))
            elif u < 0.90:
                burst.append(payload(seq, flags=P.FLAG_RESULT | P.FLAG_OVERFLOW))
            elif u < 0.95:
                burst.append(payload(seq, exp=int(rng.integers(1, 4))))
            else:
                burst.append(bytes(int(rng.integers(0, 40))))  # too short to be anything
        overflowed = _reference(wa, wina, burst, n, step, ref_rows) or overflowed
        col.handle(burst)
        answered = sorted(ref_rows)
        sent_a = [int(x) for x in reca.sent]
        in_flight = sorted({s for s in sent_a if s not in ref_rows} | {s for s in in_flight if s not in ref_rows})
    assert winb.finished
    assert col.bursts > 0  # some bursts went the vectorised way
    for key in ("packets_received", "ignored", "duplicates", "checksum_failures"):
        assert getattr(wa.stats, key) == getattr(wb.stats, key), key
        assert getattr(wa.stats, key) > 0, key  # the random bursts did exercise it
    sent_b = [parse_payload(f[P.AGG_OFFSET :], lanes) for f in recb.sent]
    assert [int(x) for x in reca.sent] == [r.seq for r in sent_b if r is not None]
    assert np.array_equal(np.stack([ref_rows[k] for k in range(n)]), col.rows)
    assert col.overflow == overflowed
