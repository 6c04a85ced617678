"""One exchange's receive side: bursts of RESULT payloads checked, reassembled and fed to the window.

A worker wakes up to one or more RESULTs at once (`Transport.recv_many`). A burst of plain RESULTs (the usual
case, in every format: a narrow RESULT's shifted exponent included) is checked with `struct` per header and one
numpy sum for all the checksums (`codec.values_view` over the joined payloads), its values stored in one
assignment, and the Python left per packet is the window's bookkeeping. Bursts with anything unusual in them
(another job's or step's packet, a bad checksum, OVERFLOW, CORRUPT, an exponent below the job's scale) go payload
by payload through every check of docs/protocol.md in its order, read as `codec.parse_payload` reads them but
without an object per packet. Sums are kept in int32 units of 2**E (a narrow RESULT's v * 2**s always fits);
only a RESULT whose shift would not fit widens them to int64."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from hostagent import protocol as P
from hostagent.codec import mark_retransmission, values_view, wire_dtype
from hostagent.exceptions import ProtocolError
from hostagent.window import Send, SlotWindow

if TYPE_CHECKING:
    from hostagent.worker import Worker

_CHECKED_FLAGS = P.FLAG_RESULT | P.FLAG_OVERFLOW | P.FLAG_CORRUPT
#: format bits and the checked flags of a header's byte 4: a plain RESULT has exactly (fmt << 6) | RESULT there
_PLAIN_MASK = 0xC0 | _CHECKED_FLAGS
_HDR = P.AGG_HDR_STRUCT


class ResultCollector:
    """Receive state of one exchange of `n` chunks at collective `step`: the summed rows, which chunks are in,
    whether any RESULT flagged OVERFLOW, and `check_at` (a lower bound of the window's earliest timer)."""

    def __init__(self, worker: Worker, window: SlotWindow, frames: npt.NDArray[np.uint8], n: int, step: int,
                 rows: npt.NDArray[np.integer] | None = None) -> None:
        self.worker = worker
        self.window = window
        self.frames = frames
        self.n = n
        self.step = step
        # Sums in units of 2**scale_exp, one row per chunk. Every row is written exactly once (each chunk is
        # accepted once) before the exchange finishes, so a buffer of the right shape is reused without zeroing.
        # int32 holds every RESULT a switch sends exactly (int32 at the job's scale; int16/int8 shifted by at most
        # 32 - bits, which the root's requantization never exceeds); the first RESULT that would need more widens
        # the buffer to int64.
        if rows is None or rows.shape != (n, worker.lanes) or rows.dtype not in (np.int32, np.int64):
            rows = np.empty((n, worker.lanes), dtype=np.int32)
        self.rows: npt.NDArray[np.integer] = rows
        self.have = bytearray(n)
        self.overflow = False
        self.check_at = 0.0
        self.bursts = 0  # bursts handled at once (the others went payload by payload)
        lanes = worker.lanes
        #: exact payload length of a RESULT in each format; which format a payload length belongs to
        self._need = {fmt: P.AGG_HDR_LEN + P.values_len(fmt, lanes) for fmt in P.ELEMENT_SIZE}
        self._fmt_of = {length: fmt for fmt, length in self._need.items()}
        #: the largest exponent shift whose units still fit the int32 rows: a b-bit value times 2**(32 - b)
        self._max_shift = {fmt: 32 - 8 * size for fmt, size in P.ELEMENT_SIZE.items()}
        self._clock = worker.clock
        self._scratch = np.empty((8, lanes), dtype=np.int32)  # a burst's values in native int32 (grows as needed)
        self._send = worker.transport.send_later  # a burst per wake-up: queued frames leave before the next wait
        self._flen = frames.shape[1]

    def emit(self, sends: Iterable[Send]) -> None:
        """Queue the frames of `sends`, RETX-flagged when resent."""
        frames, send, k = self.frames, self._send, 0
        for s in sends:
            if s.retry:
                mark_retransmission(frames[s.seq])
            send(frames[s.seq])
            k += 1
        stats = self.worker.stats
        stats.packets_sent += k
        stats.bytes_sent += k * self._flen

    def handle(self, batch: list[bytes]) -> None:
        """Process a burst of payloads in arrival order (one clock reading: they were all waiting together)."""
        now = self._clock()
        length = len(batch[0]) if batch else 0
        if length in self._fmt_of and all(len(p) == length for p in batch) and self._plain_burst(batch, length, now):
            return
        one = self._one
        for p in batch:
            one(p, now)

    def _plain_burst(self, batch: list[bytes], length: int, now: float) -> bool:
        """Payloads of `length` bytes each, handled at once when every one is a plain RESULT: of this job and step,
        summing every worker, neither OVERFLOW nor CORRUPT, intact, at an exponent whose shift keeps the units in
        int32 (a narrow RESULT's `exp = E + s`). The headers are read with `struct` (cheaper than numpy for the few
        RESULTs a wake-up brings), the values converted to native int32 in one copy, the checksums as one wrapping
        uint32 sum over them, the values stored with one slice assignment when they came in order. False, with nothing done, when any payload needs the full checks of `_one`."""
        w = self.worker
        fmt = self._fmt_of[length]
        key = (fmt << 6) | P.FLAG_RESULT
        job, step, count, scale, top = w.job, self.step, w.n_workers, w.scale_exp, self._max_shift[fmt]
        unpack = _HDR.unpack_from
        heads = [unpack(p) for p in batch]
        shifts: list[int] = []
        for job_id, _slot, ff, _vc, exp, _r, cnt, _r2, _seq, stp, _csum in heads:
            if (ff & _PLAIN_MASK) != key or job_id != job or stp != step or cnt != count or not 0 <= exp - scale <= top:
                return False
            shifts.append(exp - scale)
        k = len(batch)
        if self._scratch.shape[0] < k:
            self._scratch = np.empty((k, w.lanes), dtype=np.int32)
        units = self._scratch[:k]
        units[...] = values_view(b"".join(batch), length, fmt, w.lanes)  # to native int32: one copy for the burst
        # The checksum is the sum modulo 2**32: a wrapping uint32 sum of the two's complement words, no int64 pass.
        sums = np.add.reduce(units.view(np.uint32), axis=1, dtype=np.uint32).tolist()
        if any(h[10] != c for h, c in zip(heads, sums, strict=True)):
            return False
        stats = w.stats
        stats.packets_received += len(batch)
        self.bursts += 1
        w._answered = True
        window, have = self.window, self.have
        try_complete = window.try_complete
        taken: list[int] = []
        taken_seqs: list[int] = []
        for i, h in enumerate(heads):
            seq = h[8]
            sends = try_complete(h[1], seq, h[3] >> 7, now)
            if sends is None:
                self._unexpected(seq)
                continue
            have[seq] = 1
            taken.append(i)
            taken_seqs.append(seq)
            if sends:
                self.emit(sends)
            if window.armed < self.check_at:
                self.check_at = window.armed  # a RACK timer this RESULT armed for a chunk it overtook
        if taken:
            if any(shifts):
                # A narrow RESULT in units of 2**(E + s): back to units of 2**E. It fits int32 (`_max_shift`).
                units <<= np.array(shifts, dtype=np.int32)[:, None]
            first = taken_seqs[0]
            if len(taken) == k and taken_seqs[-1] - first == k - 1 and (k < 3 or taken_seqs == list(
                    range(first, first + k))):
                self.rows[first : first + k] = units  # the usual case: RESULTs in order, a slice, no gather
            else:
                self.rows[taken_seqs] = units[taken]
        return True

    def _unexpected(self, seq: int) -> None:
        """Count a RESULT the window does not expect: a duplicate of a chunk already in, else ignored."""
        if 0 <= seq < self.n and self.have[seq]:
            self.worker.stats.duplicates += 1
        else:
            self.worker.stats.ignored += 1

    def _widen(self) -> None:
        if self.rows.dtype != np.int64:
            self.rows = self.rows.astype(np.int64)

    def _one(self, payload: bytes, now: float | None = None) -> None:
        """Every check of docs/protocol.md on one payload, in that order (a short burst, or anything unusual)."""
        w = self.worker
        stats = w.stats
        stats.packets_received += 1
        length = len(payload)
        if length < P.AGG_HDR_LEN:
            stats.ignored += 1
            return
        job_id, slot, ff, vc, exp, _r, count, _r2, seq, step, csum = _HDR.unpack_from(payload, 0)
        fmt = ff >> 6
        size = self._need.get(fmt)
        if size is None or length < size or job_id != w.job or not ff & P.FLAG_RESULT or step != self.step:
            stats.ignored += 1
            return
        if length != size:
            raise ProtocolError(
                f"job {w.job}: a RESULT of {length} bytes carries {P.lanes_of(fmt, length)} values per packet, "
                f"this worker packs {w.lanes}: the pipeline and the worker disagree")
        w._answered = True
        window = self.window
        version = vc >> 7
        if not window.expects(slot, seq, version):
            self._unexpected(seq)
            return
        if count != w.n_workers:
            raise ProtocolError(
                f"job {w.job}: the RESULT of chunk {seq} sums {count} contributions but the job has "
                f"{w.n_workers} workers: the switches' job entries and the workers disagree"
            )
        values = np.frombuffer(payload, dtype=wire_dtype(fmt), count=w.lanes, offset=P.AGG_HDR_LEN)
        if ff & P.FLAG_OVERFLOW:
            self.overflow = True  # the values are clamped; the caller redoes the collective
        elif ff & P.FLAG_CORRUPT or int(values.sum(dtype=np.int64)) & 0xFFFFFFFF != csum:
            stats.checksum_failures += 1
            retry = window.retry_now(slot)
            if retry is not None:
                self.emit((retry,))
            return
        if exp < w.scale_exp:
            raise ProtocolError(f"RESULT exponent {exp} below the job's scale {w.scale_exp}")
        shift = exp - w.scale_exp
        if shift > self._max_shift[fmt]:
            self._widen()  # beyond int32 units: only a RESULT the switch would not send, but stored exactly
            self.rows[seq] = values.astype(np.int64) << shift
        elif shift or fmt != P.FMT_INT32:
            self.rows[seq] = values.astype(self.rows.dtype) << shift
        else:
            self.rows[seq] = values
        self.have[seq] = 1
        self.emit(window.complete(slot, seq, version, now))
        if window.armed < self.check_at:
            self.check_at = window.armed  # a RACK timer this RESULT armed for a chunk it overtook
