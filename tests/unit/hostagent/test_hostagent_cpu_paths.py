"""The worker's one-pass fast paths (issue 18: CPU per chunk) give exactly what the step-by-step definitions give:
the float32 int32 encoder and the fused narrow encoder against np.ldexp/np.rint and the older functions, the row
peaks against max |x| per padded row, the collector's narrow bursts (shifted exponents, int32 units) against the
per-payload rule `values << (exp - E)`, and a whole worker's int8/int16 result against the definition."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.chunking import ChunkPlan
from hostagent.codec import ChunkHeaders, Endpoints, build_template, fill_frames, row_checksums
from hostagent.collect import ResultCollector
from hostagent.congestion import CongestionWindow
from hostagent.exceptions import QuantizationError
from hostagent.perf import EchoSwitch
from hostagent.transport import L4_PAYLOAD, UdpTransport
from hostagent.window import SlotWindow
from hostagent.worker import Worker


def _tensor(seed: int, size: int, spread: int = 30) -> np.ndarray:
    """float32 values over many magnitudes, with zeros, exact .5 ties after scaling and float32 subnormals."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size) * 2.0 ** rng.integers(-spread, spread, size)).astype(np.float32)
    x[rng.integers(0, size, 7)] = 0.0
    x[rng.integers(0, size, 7)] = np.float32(2.5 * 2.0**-20)  # k + 0.5 at f = 20: rint must round to even
    x[rng.integers(0, size, 3)] = np.float32(-1e-40)  # a float32 subnormal
    return x


def _int32_definition(x: np.ndarray, f: int) -> np.ndarray:
    return np.clip(np.rint(np.ldexp(x.astype(np.float64), f)), -(2**31), 2**31 - 1).astype(np.int64)


@pytest.mark.parametrize(("size", "lanes", "f"), [(1, 64, 20), (5000, 2048, 20), (4096, 1024, -100), (3000, 256, 126),
                                                  (3000, 256, 127), (3000, 256, 128), (3000, 256, -126),
                                                  (3000, 256, -127)])
def test_int32_rows_with_the_peak_equal_the_definition(size: int, lanes: int, f: int) -> None:
    x = _tensor(size + f, size, spread=4 if f > 100 else 8 if f < 0 else 30)
    if f < 0:
        x = x * np.float32(2.0 ** min(10 - f, 112))  # large values, so that a negative f still leaves integers
    peaks = Q.row_peaks(x, lanes)
    peak = float(peaks.max())
    rows = Q.encode_int32_rows(x, f, lanes, peak)
    assert rows.dtype == np.int32 and rows.shape == (-(-size // lanes), lanes)
    ref = _int32_definition(x, f)
    assert np.array_equal(rows.reshape(-1)[:size], ref)
    assert not rows.reshape(-1)[size:].any()
    assert np.array_equal(rows, Q.encode_int32_rows(x, f, lanes))  # the float64 path of before


@pytest.mark.parametrize("margin", [-1000.0, -128.0, -64.0, 0.0, 0.4, 0.5, 0.6, 1000.0])
def test_int32_rows_near_the_clip_equal_the_definition(margin: float) -> None:
    """Values around 2**31: the float32 shortcut must hand over to the clipping path exactly where it may."""
    f = 10
    top = np.float32((2.0**31 + margin) * 2.0**-f)
    x = np.array([top, -top, top / 2, 1.0, -np.float32(2.0**31 * 2.0**-f)], dtype=np.float32)
    rows = Q.encode_int32_rows(x, f, 8, float(Q.row_peaks(x, 8).max()))
    assert np.array_equal(rows.reshape(-1)[: x.size], _int32_definition(x, f))


def test_row_peaks_are_max_abs_of_the_padded_rows() -> None:
    x = _tensor(1, 1000)
    padded = ChunkPlan(x.size, 64).split(x)
    assert np.array_equal(Q.row_peaks(x, 64), np.max(np.abs(padded.astype(np.float64)), axis=1))
    assert np.array_equal(Q.row_peaks(x[:960], 64), np.max(np.abs(padded[:15].astype(np.float64)), axis=1))
    for bad in (np.nan, np.inf, -np.inf):
        y = x.copy()
        y[500] = bad
        with pytest.raises(QuantizationError):
            Q.peak_exponent(float(Q.row_peaks(y, 64).max()))


def _narrow_definition(x: np.ndarray, f: int, lanes: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The definition, element by element: w = ldexp(x, f) in rows, s = max(0, m - (b - 1)) from each row's
    peak < 2**m, q = clip(rint(ldexp(w, -s)))."""
    w = ChunkPlan(x.size, lanes).split(np.ldexp(x.astype(np.float64), f))
    m = np.frexp(np.max(np.abs(w), axis=1))[1].astype(np.int64)
    s = np.maximum(0, m - (bits - 1))
    top = 2 ** (bits - 1) - 1
    return np.clip(np.rint(np.ldexp(w, -s[:, None])), -top, top).astype(np.int64), s


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize(("size", "lanes", "f", "dtype"), [
    (5000, 2048, 20, np.float32), (4096, 1024, 27, np.float32), (777, 64, 60, np.float32),
    (3000, 256, 126, np.float32), (3000, 256, 140, np.float32), (3000, 256, -90, np.float32),
    (3000, 256, 20, np.float64), (1, 64, 5, np.float32)])
def test_narrow_rows_equal_the_definition(bits: int, size: int, lanes: int, f: int, dtype: type) -> None:
    x: np.ndarray = _tensor(size + bits, size, spread=6 if f > 100 else 8 if f < 0 else 30).astype(dtype)
    if f < 0:
        x = x * dtype(2.0 ** min(10 - f, 112))
    x[:lanes] *= dtype(2.0**-40)  # one row of tiny values: its shift is 0, its scale 2**f
    if size > 2 * lanes:  # a row whose peak is (2**(b-1) - 0.5) * 4: s = 2, and the peak rounds up to 2**(b-1)
        x[lanes : 2 * lanes] = 0
        x[lanes + 3] = dtype((2 ** (bits - 1) - 0.5) * 2.0 ** -(f - 2))
        x[lanes + 5] = -x[lanes + 3] / 3
        x[lanes + 7] = -x[lanes + 3]
    q, shifts = Q.encode_narrow_rows(x, f, lanes, bits, Q.row_peaks(x, lanes))
    ref_q, ref_s = _narrow_definition(x, f, lanes, bits)
    if size > 2 * lanes:
        assert ref_s[1] == 2 and ref_q[1, 3] == -ref_q[1, 7] == 2 ** (bits - 1) - 1  # the clips were needed
    assert q.dtype == (np.int8 if bits == 8 else np.int16)
    assert np.array_equal(shifts, ref_s)
    assert np.array_equal(q, ref_q)
    wire_rows = np.asarray(ChunkPlan(x.size, lanes).split(Q.to_wire(x, f)), dtype=np.float64)
    old_q, old_s = Q.encode_narrow(wire_rows, bits)  # the worker's two steps before the fusion
    assert np.array_equal(q, old_q) and np.array_equal(shifts, old_s)
    assert np.array_equal(Q.encode_narrow_rows(x, f, lanes, bits)[0], q)  # peaks computed inside


class _Recorder(EchoSwitch):
    def __init__(self) -> None:
        super().__init__()
        self.sent: list[int] = []

    def send(self, frame: object) -> None:
        self.sent.append(int.from_bytes(bytes(frame)[P.AGG_OFFSET + P.OFF_SEQ : P.AGG_OFFSET + P.OFF_SEQ + 4], "big"))  # type: ignore[call-overload]


@pytest.mark.parametrize(("fmt", "seed"), [(P.FMT_INT8, 0), (P.FMT_INT8, 1), (P.FMT_INT16, 2), (P.FMT_INT16, 3)])
def test_narrow_result_bursts_store_what_the_per_payload_rule_stores(fmt: int, seed: int) -> None:
    """RESULTs in a narrow format at exponents E + s (0 <= s <= 32 - bits: the root's requantization), in bursts of
    1-12 with duplicates: the sums are stored as values << s, in int32 units, and nothing is counted twice."""
    rng = np.random.default_rng(seed)
    lanes, n, pool, job, step, scale = 64, 60, 8, 3, 4, -5
    bits = 8 * P.ELEMENT_SIZE[fmt]
    lo, hi = P.VALUE_RANGE[fmt]
    vals = rng.integers(lo, hi + 1, size=(n, lanes))
    vals[0, :2] = [lo, hi]
    shifts = rng.integers(0, 32 - bits + 1, size=n)
    shifts[:2] = 32 - bits  # the extremes: -2**31 and just below 2**31 in units
    template = build_template(Endpoints(), fmt, lanes)
    seqs = np.arange(n)
    hdr = ChunkHeaders(job_id=job, child=0, step=step, slots=seqs % pool, versions=(seqs // pool) & 1, seqs=seqs,
                       exps=scale + shifts)
    results = fill_frames(template, fmt, hdr, vals)
    results[:, P.AGG_OFFSET + P.OFF_FMT_FLAGS] |= P.FLAG_RESULT
    payloads = [results[k, P.AGG_OFFSET :].tobytes() for k in range(n)]
    rec = _Recorder()
    w = Worker(job, 0, n_workers=1, transport=rec, pool_size=pool, values_per_packet=lanes, scale_exp=scale,
               fmt=P.FORMAT_NAMES[fmt], clock=lambda: 0.0)
    win = SlotWindow(n, w.versions, timeout=0.05, max_retries=50, clock=lambda: 0.0, rtt=w.rtt,
                     congestion=CongestionWindow(pool, min_window=2))
    col = ResultCollector(w, win, fill_frames(build_template(Endpoints(), fmt, lanes), fmt, hdr, vals), n, step)
    in_flight = [s.seq for s in win.start()]
    done: list[int] = []
    duplicates = 0
    while not win.finished:
        rng.shuffle(in_flight)
        take = in_flight[: int(rng.integers(1, 13))]
        burst = [payloads[k] for k in take]
        if done and rng.random() < 0.3:
            burst.append(payloads[int(rng.choice(done))])
            duplicates += 1
        before = len(rec.sent)
        col.handle(burst)
        done += take
        # RESULTs out of send order make the window resend overtaken chunks (RACK), maybe one answered later in
        # the same burst: a chunk is in flight once, until answered
        in_flight = list(dict.fromkeys(k for k in in_flight + rec.sent[before:] if k not in done))
    ref = vals.astype(np.int64) << shifts[:, None]
    assert col.rows.dtype == np.int32  # every such RESULT fits int32 units: no widening, no int64 pass
    assert np.array_equal(col.rows.astype(np.int64), ref)
    assert w.stats.duplicates == duplicates and w.stats.ignored == w.stats.checksum_failures == 0
    assert col.bursts > 0


def test_a_shift_beyond_int32_units_widens_and_stays_exact() -> None:
    """A narrow RESULT shifted more than 32 - bits (no switch sends one) is still stored exactly, in int64."""
    lanes, job, step = 64, 3, 0
    vals = np.full((1, lanes), 127)
    hdr = ChunkHeaders(job_id=job, child=0, step=step, slots=np.array([0]), versions=np.array([0]),
                       seqs=np.array([0]), exps=np.array([30]))
    frame = fill_frames(build_template(Endpoints(), P.FMT_INT8, lanes), P.FMT_INT8, hdr, vals)
    frame[0, P.AGG_OFFSET + P.OFF_FMT_FLAGS] |= P.FLAG_RESULT
    w = Worker(job, 0, n_workers=1, transport=_Recorder(), pool_size=4, values_per_packet=lanes, fmt="int8",
               clock=lambda: 0.0)
    win = SlotWindow(1, w.versions, timeout=0.05, max_retries=5, clock=lambda: 0.0)
    col = ResultCollector(w, win, frame, 1, step)
    win.start()
    col.handle([frame[0, P.AGG_OFFSET :].tobytes()])
    assert win.finished and col.rows.dtype == np.int64 and int(col.rows[0, 0]) == 127 << 30


@pytest.mark.parametrize(("fmt", "bits"), [("int8", 8), ("int16", 16)])
@pytest.mark.parametrize("lanes", [256, 2048])
def test_worker_narrow_allreduce_is_the_definition(fmt: str, bits: int, lanes: int) -> None:
    """One worker through an instant echo switch (its RESULT is its DATA: the packet's values at E + s): the
    result is the element-wise definition, quantized per packet and back through float64, bit for bit."""
    x = _tensor(lanes + bits, 5 * lanes + 3)
    w = Worker(1, 0, n_workers=1, transport=EchoSwitch(), pool_size=4, values_per_packet=lanes, fmt=fmt)
    for exponent in (Q.block_exponent(x), Q.block_exponent(x) + 2):
        f = Q.frac_bits(exponent, 1)
        q, s = _narrow_definition(x, f, lanes, bits)
        ref = np.ldexp((q << s[:, None]).astype(np.float64), -f).reshape(-1)[: x.size].astype(np.float32)
        assert np.array_equal(w.allreduce(x, exponent=exponent), ref)
    assert w.stats.ignored == w.stats.duplicates == w.stats.checksum_failures == 0


@pytest.mark.parametrize("fmt", [P.FMT_INT32, P.FMT_INT8])
def test_a_corrupt_result_in_a_plain_burst_is_resent_not_stored(fmt: int) -> None:
    """A burst of RESULTs that all look plain, one with a value changed on the way (its checksum no longer holds):
    that one is counted, resent at once and not stored; its intact copy is stored later, the others at once."""
    lanes, n, job, step = 64, 4, 3, 1
    lo, hi = P.VALUE_RANGE[fmt]
    vals = np.random.default_rng(fmt).integers(lo, hi + 1, size=(n, lanes))
    seqs = np.arange(n)
    hdr = ChunkHeaders(job_id=job, child=0, step=step, slots=seqs, versions=np.zeros(n, dtype=np.int64), seqs=seqs,
                       exps=np.full(n, 2 if fmt == P.FMT_INT8 else 0))
    frames = fill_frames(build_template(Endpoints(), fmt, lanes), fmt, hdr, vals)
    res = frames.copy()
    res[:, P.AGG_OFFSET + P.OFF_FMT_FLAGS] |= P.FLAG_RESULT
    payloads = [res[k, P.AGG_OFFSET :].tobytes() for k in range(n)]
    bad = bytearray(payloads[2])
    bad[-1] ^= 1
    rec = _Recorder()
    w = Worker(job, 0, n_workers=1, transport=rec, pool_size=n, values_per_packet=lanes, fmt=P.FORMAT_NAMES[fmt],
               clock=lambda: 0.0)
    win = SlotWindow(n, w.versions, timeout=0.05, max_retries=5, clock=lambda: 0.0)
    col = ResultCollector(w, win, frames, n, step)
    assert [s.seq for s in win.start()] == [0, 1, 2, 3]
    col.handle([payloads[0], payloads[1], bytes(bad), payloads[3]])
    assert w.stats.checksum_failures == 1 and rec.sent == [2] and not col.have[2] and not win.finished
    col.handle([payloads[2]])
    assert win.finished
    shift = 2 if fmt == P.FMT_INT8 else 0
    assert np.array_equal(col.rows.astype(np.int64), vals << shift)


@pytest.mark.parametrize("burst", [1, 2, 3, 64, 65, 150])
def test_udp_bursts_of_every_size_leave_and_arrive_whole_and_in_order(burst: int) -> None:
    """Short bursts go one system call per datagram, longer ones through sendmmsg/recvmmsg: either way every
    datagram is sent once, as it was when queued (a later change to the frame's buffer is not sent), in order."""
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)  # 150 jumbo datagrams at once
    sink.bind(("127.0.0.1", 0))
    t = UdpTransport("127.0.0.1", local_port=0, bind_addr="127.0.0.1", agg_port=sink.getsockname()[1])
    sink.connect(t.sock.getsockname())
    try:
        frames = np.random.default_rng(burst).integers(0, 256, size=(burst, L4_PAYLOAD + 8216), dtype=np.uint8)
        sent = [frames[i, L4_PAYLOAD:].tobytes() for i in range(burst)]
        for i in range(burst):
            t.send_later(frames[i])
        frames[:] = 0  # after queueing: not what leaves
        assert t.recv_many(0.0) == []  # flushes what is queued, nothing to receive
        sink.settimeout(1.0)
        assert [sink.recv(65536) for _ in range(burst)] == sent
        for p in reversed(sent):
            sink.send(p)
        time.sleep(0.05)
        got: list[bytes] = []
        while len(got) < burst and (more := t.recv_many(1.0)):
            got += more
        assert got == sent[::-1] and t.recv_many(0.0) == []
    finally:
        t.close()
        sink.close()


class _FlushCounter(EchoSwitch):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


@pytest.mark.parametrize(("srtt", "check_in", "issued", "in_flight", "expected"), [
    (0.008, 1.0, 20, 16, 0.001),  # gather x SRTT
    (0.4, 1.0, 20, 16, 0.01),  # at most 10 ms
    (0.008, 0.0004, 20, 16, 0.0004),  # never past the next timer
    (0.008, -0.1, 20, 16, None),  # a timer is due: no wait
    (None, 1.0, 20, 16, None),  # no round trip measured yet
    (0.008, 1.0, 64, 16, None),  # every chunk sent: the drain is not delayed
    (0.008, 1.0, 20, 7, None),  # too few in flight to cover the wait
])
def test_gather_waits_a_fraction_of_the_round_trip_only_while_the_window_is_full(
        monkeypatch: pytest.MonkeyPatch, srtt: float | None, check_in: float, issued: int, in_flight: int,
        expected: float | None) -> None:
    import hostagent.worker as worker_mod

    slept: list[float] = []
    monkeypatch.setattr(worker_mod.time, "sleep", slept.append)
    now = 100.0
    tr = _FlushCounter()
    w = Worker(1, 0, n_workers=1, transport=tr, pool_size=64, clock=lambda: now, gather=0.125)
    assert w.rtt is not None
    if srtt is not None:
        w.rtt.sample(srtt)
    win = SlotWindow(64, w.versions, timeout=0.05, max_retries=5, clock=lambda: now)
    win.start()  # 64 chunks in flight, none left
    for s in list(range(issued, 64)) + list(range(in_flight, issued)):  # free the slots: issued chunks left
        win._slots.pop(s)
    win._next_seq = issued
    assert win.outstanding == in_flight and win.issuing == (issued < 64)
    w._gather(win, now + check_in)
    if expected is None:
        assert slept == [] and w.stats.gathers == 0
    else:
        assert slept == [pytest.approx(expected)] and w.stats.gathers == 1
        assert tr.flushes == 1  # the chunks the burst released leave before the wait


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.int8, np.int64])
def test_row_checksums_are_the_protocol_checksum_of_each_row(dtype: type) -> None:
    """Including rows whose sum wraps modulo 2**32 both ways (int32 extremes), and a non-contiguous view."""
    info = np.iinfo(np.int32 if dtype == np.int64 else dtype)
    rng = np.random.default_rng(7)
    rows: np.ndarray = rng.integers(info.min, info.max, size=(40, 2048), endpoint=True).astype(dtype)
    rows[0], rows[1] = info.max, info.min
    for view in (rows, rows[::2]):
        assert row_checksums(view).tolist() == [P.checksum(r) for r in view]
