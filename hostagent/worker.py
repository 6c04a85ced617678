"""`Worker`: one rank's reliable, quantized all-reduce through the aggregation switches.

    worker = Worker(job=1, rank=0, n_workers=4, transport=UdpTransport("10.0.1.254", AGG_PORT, ...), pool_size=32)
    total = worker.allreduce(np.asarray(grad, dtype=np.float32))

The worker owns reliability and flow control (docs/protocol.md): it sends chunks in order into the job's pool of
slots, a slot's next chunk only when that slot's RESULT came back (`SlotWindow`), and no more in flight than its
congestion window (`CongestionWindow`: AIMD, halved on a timeout or on more losses than random loss explains); it
resends a chunk as soon as a RESULT for a chunk sent after it shows it lost (RACK), on timeout as the last resort,
and accepts a RESULT only if it answers an outstanding chunk (job, step, slot, version and seq all match) and its
linear checksum holds; a failed checksum triggers an immediate retransmission and is counted. Floats travel as
block floating point (`quantize`): the shared exponent comes from the caller, from the previous result of the same
tensor (no extra round trip), or from a one-packet agreement round; a saturated sum (OVERFLOW) makes every worker
redo the collective with an agreed exponent, so a wrong guess never yields a wrong result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from hostagent import protocol as P
from hostagent import quantize as Q
from hostagent.chunking import ChunkPlan
from hostagent.codec import ChunkHeaders, Endpoints, build_template, fill_frames
from hostagent.collect import ResultCollector
from hostagent.congestion import CongestionWindow
from hostagent.exceptions import AllReduceTimeoutError, JobNotAdmittedError, ProtocolError, QuantizationError
from hostagent.transport import Transport
from hostagent.validate import check_array
from hostagent.window import RttEstimator, SlotVersions, SlotWindow

FORMATS = {"int32": P.FMT_INT32, "int16": P.FMT_INT16, "int8": P.FMT_INT8}
_FMT_BITS = {P.FMT_INT32: 32, P.FMT_INT16: 16, P.FMT_INT8: 8}
MIN_WINDOW = 8  # chunks: the congestion window's floor
#: Gathering RESULTs (`gather`): after a wake-up that brought fewer than _GATHER_BURST RESULTs, while new chunks
#: remain and at least _GATHER_FLIGHT are in flight, the worker waits `gather` x SRTT (at most _GATHER_MAX seconds,
#: never past a timer) before it looks again, so one wake-up takes in several RESULTs. 16, not 4: the burst after
#: a wait holds about gather x window RESULTs (4 at a window of 32), and waiting again after it, rather than waking
#: for the next single RESULT, took the 25 Mbit/s fabric from 0.40 to 0.30 wake-ups per chunk (docs/performance.md).
_GATHER_BURST, _GATHER_FLIGHT, _GATHER_MAX = 16, 8, 0.01
_EXP_BITS = 12  # bits per rank in the exponent agreement round (covers MAX_EXPONENT - MIN_EXPONENT)


@dataclass
class WorkerStats:
    """Counters over the worker's lifetime (`asdict()` for JSON)."""

    calls: int = 0
    chunks: int = 0
    packets_sent: int = 0
    packets_received: int = 0
    retransmissions: int = 0
    fast_retransmissions: int = 0  # found lost by a later RESULT, without a timer
    timer_retransmissions: int = 0  # a full retransmission timeout
    probes: int = 0  # tail loss probes: the first timer to expire resends only the newest chunk
    spurious: int = 0  # resends whose RESULT came too soon to answer them: the first send's
    checksum_failures: int = 0
    duplicates: int = 0
    ignored: int = 0
    overflow_redos: int = 0
    exponent_rounds: int = 0
    bytes_sent: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time inside allreduce (on a shared host: what it took from others)
    timer_scans: int = 0  # times the timers were scanned (`SlotWindow.expired()`) with no RESULT waiting
    empty_scans: int = 0  # ... of which sent nothing: the loop woke for a timer that had nothing to do
    window: float = 0.0  # the congestion window (chunks) after the last call
    srtt_ms: float = 0.0  # the smoothed round trip and the retransmission timeout after the last call
    rto_ms: float = 0.0
    loss_decreases: int = 0
    delay_decreases: int = 0
    timeout_resets: int = 0
    tolerated_losses: int = 0  # losses the congestion window did not halve for: within its random-loss tolerance
    # Where an exchange's time goes (seconds, summed over calls): the next chunk waiting for its slot (the previous
    # use's RESULT) or for room in the congestion window, and the drain from the last new chunk to the last RESULT.
    blocked_slot_seconds: float = 0.0
    blocked_window_seconds: float = 0.0
    drain_seconds: float = 0.0
    wakeups: int = 0  # bursts of RESULTs taken in (each costs a wake-up: select, recv, a cold cache)
    gathers: int = 0  # waits for more RESULTs after a short burst (`gather`)

    def as_dict(self) -> dict[str, float]:
        return dict(asdict(self))


@dataclass(frozen=True)
class _Exchange:
    units: npt.NDArray[np.integer]  # summed values in units of 2**scale_exp, padded rows flattened (int32 or int64)
    overflow: bool


class Worker:
    """One rank of job `job`. Options are keyword-only; the job's parameters come from the controller."""

    def __init__(
        self,
        job: int,
        rank: int,
        *,
        n_workers: int,
        transport: Transport,
        child: int | None = None,
        pool_size: int = 32,
        scale_exp: int = 0,
        fmt: str = "int32",
        endpoints: Endpoints | None = None,
        timeout: float = 0.05,
        max_timeout: float = 1.0,
        min_timeout: float = 0.01,
        adaptive_timeout: bool = True,
        backoff: float = 2.0,
        max_retries: int = 20,
        exponent_headroom: int = 1,
        clock: Callable[[], float] = time.monotonic,
        values_per_packet: int = P.VALUES_PER_PACKET,
        job_values: int | None = None,
        congestion: bool = True,
        fast_recovery: bool = True,
        gather: float = 0.125,
        max_window: int | None = None,
    ) -> None:
        if not 0 <= job <= 0xFFFF:
            raise ProtocolError(f"job id {job} does not fit the 16-bit job_id field")
        if n_workers < 1 or not 0 <= rank < n_workers:
            raise ProtocolError(f"rank {rank} is not in a job of {n_workers} workers")
        child = rank if child is None else child
        if not 0 <= child < P.MAX_CHILDREN:
            raise ProtocolError(f"child index {child} does not fit the 5-bit child field (0..{P.MAX_CHILDREN - 1})")
        if not 1 <= pool_size <= 0xFFFF:
            raise ProtocolError(f"slot pool size {pool_size} is not in 1..65535")
        if fmt not in FORMATS:
            raise ProtocolError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        if not -128 <= scale_exp <= 127:
            raise ProtocolError(f"scale exponent {scale_exp} does not fit the signed 8-bit exp field")
        P.check_lanes(values_per_packet)
        if job_values is not None and job_values != values_per_packet:
            # The switches would drop every packet (BAD_FORMAT): refuse the job rather than time out on it.
            raise ProtocolError(f"job {job} carries {job_values} values per packet (its pipeline's build) but this "
                                f"worker packs {values_per_packet}")
        self.lanes = values_per_packet
        self.job = job
        self.rank = rank
        self.n_workers = n_workers
        self.child = child
        self.transport = transport
        self.scale_exp = scale_exp
        self.fmt = FORMATS[fmt]
        self.endpoints = endpoints or Endpoints()
        self.timeout, self.max_timeout, self.backoff, self.max_retries = timeout, max_timeout, backoff, max_retries
        self.exponent_headroom = exponent_headroom
        self.clock = clock
        self.versions = SlotVersions(pool_size)
        self.rtt = RttEstimator(timeout, min_rto=min_timeout, max_rto=max_timeout) if adaptive_timeout else None
        # Like the RTT estimate, the window describes the path and outlives a call. Its floor of MIN_WINDOW chunks
        # keeps later RESULTs coming to show losses (RACK): at a window of 1 every loss waits for a timer, and
        # random loss on every link (5%) drove AIMD there (4 workers on the switch model: 27 s against 1.1 s).
        # `max_window` (default: the pool) caps it lower. A pool twice the window lets a lost chunk block only its
        # slot's next use, not every later send: on the emulated fabric at 1% loss every such run was faster
        # (docs/protocol.md), so `p4ina run` passes half its pool; the library's default keeps the window at the pool.
        cap = pool_size if max_window is None else max(1, min(max_window, pool_size))
        self.congestion = CongestionWindow(cap, min_window=min(MIN_WINDOW, cap)) if congestion else None
        self.fast_recovery = fast_recovery
        # A wake-up for one RESULT costs a worker more CPU than the RESULT itself (a select, a recv and the caches
        # of a process that slept: ~100 against ~45 us per chunk, docs/performance.md "Host agent"), which a
        # CPU-bound host takes from its switches. Waiting `gather` x SRTT after a short burst lets RESULTs pile
        # up: with a window of W chunks per round trip a wake-up then takes in about gather x W of them. The
        # wait delays the next chunks by at most that much, which a window of at least _GATHER_FLIGHT chunks in
        # flight covers. 0 turns it off.
        self.gather = gather
        self.stats = WorkerStats()
        self.last_exponent: int | None = None
        self._templates = {f: build_template(self.endpoints, f, self.lanes) for f in {P.FMT_INT32, self.fmt}}
        self._predicted: dict[Hashable, int] = {}
        self._frames: npt.NDArray[np.uint8] | None = None  # the last call's frames, reused when the shape matches
        self._rows: npt.NDArray[np.integer] | None = None  # the last call's RESULT rows, likewise
        self._step = 0
        self._answered = False

    # -- public API ----------------------------------------------------------------------------------------------

    def allreduce(
        self, array: npt.NDArray[np.generic], *, exponent: int | None = None, key: Hashable | None = None
    ) -> npt.NDArray[np.generic]:
        """The element-wise sum of `array` over the job's workers, same shape and dtype.

        int32 is exact (saturating: an overflowing sum raises QuantizationError). float32/float64 are within the
        bound of `hostagent.quantize`. `exponent` (the same on all workers) fixes the shared exponent; otherwise
        it is predicted from this tensor's previous result (`key`, default: size and dtype) or agreed first."""
        arr = check_array(array)
        start, cpu_start = time.perf_counter(), time.process_time()
        flat = arr.reshape(-1)
        try:
            if flat.size == 0:
                return arr.copy()
            if arr.dtype == np.int32:
                out: npt.NDArray[np.generic] = self._allreduce_int32(flat)
            else:
                out = self._allreduce_float(flat, exponent, key if key is not None else (flat.size, arr.dtype.str))
            return out.reshape(arr.shape)
        finally:
            self.stats.calls += 1
            self.stats.seconds += time.perf_counter() - start
            self.stats.cpu_seconds += time.process_time() - cpu_start

    def agree_exponent(self, local: int) -> int:
        """The largest of every worker's `local` exponent, through the switch (one packet for up to 5 workers).

        Each rank writes its exponent as 0/1 bits into its own lanes; sums of 0/1 stay exact even if the job's
        result format is int8, so the round works under every quantization setting."""
        v = min(max(local, Q.MIN_EXPONENT), Q.MAX_EXPONENT) - Q.MIN_EXPONENT
        lanes = np.zeros(self.n_workers * _EXP_BITS, dtype=np.int64)
        lanes[self.rank * _EXP_BITS : (self.rank + 1) * _EXP_BITS] = (v >> np.arange(_EXP_BITS)) & 1
        ex = self._exchange(lanes, P.FMT_INT32)
        self.stats.exponent_rounds += 1
        if ex.overflow:
            raise QuantizationError("the switch flagged OVERFLOW on the exponent agreement round")
        bits = ex.units[: lanes.size].reshape(self.n_workers, _EXP_BITS)
        if np.any((bits != 0) & (bits != 1)):
            raise QuantizationError("exponent agreement returned non-binary lanes: another job shares the slots?")
        values = (bits << np.arange(_EXP_BITS)).sum(axis=1)
        return int(values.max()) + Q.MIN_EXPONENT

    def close(self) -> None:
        """Close the transport. A worker runs one collective at a time; it is not shared between threads."""
        self.transport.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- int32 and float paths -----------------------------------------------------------------------------------

    def _allreduce_int32(self, flat: npt.NDArray[np.generic]) -> npt.NDArray[np.int32]:
        ex = self._exchange(np.asarray(flat, dtype=np.int32), P.FMT_INT32)
        if ex.overflow:
            raise QuantizationError(f"job {self.job}: the int32 sum overflowed (the switch saturated it)")
        return ex.units[: flat.size].astype(np.int32)

    def _allreduce_float(self, flat: npt.NDArray[np.generic], exponent: int | None, key: Hashable) -> npt.NDArray[np.floating]:
        peaks = Q.row_peaks(flat, self.lanes)  # every packet's max |x|: the block exponent and the narrow shifts
        peak = float(peaks.max())
        local = Q.peak_exponent(peak)  # also refuses NaN/inf before anything is sent
        if exponent is None:
            exponent = self._predicted.get(key)
        if exponent is None:
            exponent = self.agree_exponent(local)
        for attempt in range(2):
            f = Q.frac_bits(exponent, self.n_workers)
            if self.fmt == P.FMT_INT32:
                ex = self._exchange(Q.encode_int32_rows(flat, f, self.lanes, peak).reshape(-1), P.FMT_INT32)
            else:
                ex = self._exchange_narrow(flat, f, peaks)
            if not ex.overflow:
                break
            if attempt == 1:
                raise QuantizationError(f"job {self.job}: sum saturated even with the agreed exponent {exponent}")
            self.stats.overflow_redos += 1  # every worker saw the same flagged RESULT, so all redo together
            exponent = self.agree_exponent(local)
        self.last_exponent = exponent
        out = Q.from_wire(ex.units[: flat.size], f, flat.dtype)
        self._predicted[key] = Q.block_exponent(out) + self.exponent_headroom
        return out

    def _exchange_narrow(self, flat: npt.NDArray[np.generic], f: int, peaks: npt.NDArray[np.float64]) -> _Exchange:
        """`flat` at fraction bits `f` in the job's narrow format: per-packet shifts from the row peaks, one pass
        from the tensor to packet rows (`quantize.encode_narrow_rows`), the padded rows sent as they are."""
        q, shifts = Q.encode_narrow_rows(flat, f, self.lanes, _FMT_BITS[self.fmt], peaks)
        exps = self.scale_exp + shifts
        if np.any(exps > 127):
            raise QuantizationError("a packet exponent does not fit the 8-bit exp field; lower the job's scale")
        return self._exchange(q.reshape(-1), self.fmt, exps)

    # -- the reliable exchange -----------------------------------------------------------------------------------

    def _gather(self, window: SlotWindow, check_at: float) -> None:
        """After a short burst: send what it released, then wait for more RESULTs to pile up (see `gather`)."""
        srtt = self.rtt.srtt if self.rtt is not None else None
        if srtt is None or not window.issuing or window.outstanding < _GATHER_FLIGHT:
            return
        delay = min(self.gather * srtt, _GATHER_MAX, check_at - self.clock())
        if delay > 0:
            self.transport.flush()
            self.stats.gathers += 1
            time.sleep(delay)

    def _exchange(
        self, values: npt.NDArray[np.integer], fmt: int, exps: npt.NDArray[np.int64] | None = None
    ) -> _Exchange:
        """Send `values` (integers in range for `fmt`) as DATA, collect every RESULT; sums in units of 2**E."""
        plan = ChunkPlan(values.size, self.lanes)
        n = plan.n_chunks
        rows = values.reshape(n, self.lanes) if values.size == n * self.lanes else plan.split(values)
        pool = len(self.versions)
        seqs = np.arange(n, dtype=np.int64)
        slots = seqs % pool
        start_bits = np.asarray(self.versions.bits, dtype=np.int64)
        vers = (start_bits[slots] + seqs // pool) & 1
        step = self._step
        self._step = (self._step + 1) & 0xFFFFFFFF
        hdr = ChunkHeaders(
            job_id=self.job,
            child=self.child,
            step=step,
            slots=slots,
            versions=vers,
            seqs=seqs,
            exps=np.full(n, self.scale_exp, dtype=np.int64) if exps is None else exps,
        )
        frames = self._frames = fill_frames(self._templates[fmt], fmt, hdr, rows, out=self._frames)
        window = SlotWindow(
            n,
            self.versions,
            timeout=self.timeout,
            max_retries=self.max_retries,
            clock=self.clock,
            backoff=self.backoff,
            max_timeout=self.max_timeout,
            job=self.job,
            rank=self.rank,
            rtt=self.rtt,
            congestion=self.congestion,
            fast_recovery=self.fast_recovery,
        )
        results = ResultCollector(self, window, frames, n, step, self._rows)
        self.stats.chunks += n
        results.emit(window.start())
        retrans_before = window.retransmissions
        recv_many = self.transport.recv_many
        try:
            # `check_at` is a lower bound of the earliest timer (new chunks' deadlines are all later; RACK timers a
            # RESULT arms are folded in), so timers are scanned only when it has passed, not once per packet.
            results.check_at = window.next_deadline() or 0.0
            while not window.finished:
                now = self.clock()
                if now < results.check_at:
                    batch = recv_many(results.check_at - now)
                else:
                    # RESULTs that arrived while this process was descheduled come first: a timer must not fire
                    # for a chunk whose RESULT is already waiting in the socket (spurious resends on a busy host).
                    batch = recv_many(0.0)
                    if not batch:
                        due = window.expired()
                        self.stats.timer_scans += 1
                        self.stats.empty_scans += not due
                        results.emit(due)
                        results.check_at = window.next_deadline() or self.clock()
                        continue
                if batch:
                    results.handle(batch)
                    self.stats.wakeups += 1
                    if len(batch) < _GATHER_BURST and self.gather:
                        self._gather(window, results.check_at)
        except AllReduceTimeoutError as exc:
            if not self._answered:
                raise JobNotAdmittedError(
                    f"job {self.job} rank {self.rank}: the switch never answered ({exc.retries} retries of "
                    f"{len(exc.missing)}/{exc.total} chunks): the job or this host is not admitted, the switch is "
                    "unreachable, or the other workers are not running"
                ) from None
            raise
        finally:
            self.stats.retransmissions += window.retransmissions - retrans_before
            self.stats.fast_retransmissions += window.fast_retransmissions
            self.stats.timer_retransmissions += window.timer_retransmissions
            self.stats.probes += window.probes
            self.stats.spurious += window.spurious
            self.stats.blocked_slot_seconds += window.blocked_slot
            self.stats.blocked_window_seconds += window.blocked_window
            self.stats.drain_seconds += window.drain
            if self.rtt is not None and self.rtt.srtt is not None:
                self.stats.srtt_ms, self.stats.rto_ms = round(1000 * self.rtt.srtt, 2), round(1000 * self.rtt.rto, 2)
            if self.congestion is not None:
                cs = self.congestion.stats
                self.stats.window = round(self.congestion.window, 2)
                self.stats.loss_decreases, self.stats.delay_decreases = cs.loss_decreases, cs.delay_decreases
                self.stats.timeout_resets = cs.timeout_resets
                self.stats.tolerated_losses = cs.tolerated_losses
            self.transport.flush()
        self._rows = results.rows  # reused by the next exchange of this shape: its units are consumed by then
        return _Exchange(results.rows.reshape(-1), results.overflow)
