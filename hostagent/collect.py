"""One exchange's receive side: bursts of RESULT payloads checked, reassembled and fed to the window.

A worker wakes up to many RESULTs at once (`Transport.recv_many`). A burst of plain RESULTs (the usual case) is
joined and read as one structured numpy array (`codec.header_view`/`values_view`): one vectorised test checks
every header field and checksum, the values are stored in one fancy-indexed assignment, and the Python left per
packet is the window's bookkeeping. Short bursts, and bursts with anything unusual in them (another job's or
step's packet, a bad checksum, OVERFLOW, CORRUPT, a shifted exponent), go payload by payload through every check
of docs/protocol.md in its order, read as `codec.parse_payload` reads them but without an object per packet."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from hostagent import protocol as P
from hostagent.codec import header_view, mark_retransmission, values_view, wire_dtype
from hostagent.exceptions import ProtocolError
from hostagent.window import Send, SlotWindow

if TYPE_CHECKING:
    from hostagent.worker import Worker

_CHECKED_FLAGS = P.FLAG_RESULT | P.FLAG_OVERFLOW | P.FLAG_CORRUPT
_HDR = P.AGG_HDR_STRUCT
#: Bursts shorter than this go payload by payload: a vectorised pass costs a dozen numpy calls (~25 us) whatever
#: its size, one payload's checks about 5 us (measured at 1024 values: break-even near 8 payloads).
_MIN_VECTOR = 8


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
        # int32 holds an int32 RESULT exactly; the first RESULT that needs more (a shifted exponent or another
        # format) widens the buffer to int64.
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
        """Process a burst of payloads in arrival order."""
        if len(batch) >= _MIN_VECTOR:
            length = len(batch[0])
            if all(len(p) == length for p in batch) and self._plain_burst(b"".join(batch), length, len(batch)):
                return
        one = self._one
        for p in batch:
            one(p)

    def _plain_burst(self, buf: bytes, length: int, k: int) -> bool:
        """`k` payloads of `length` bytes each, end to end in `buf`, handled at once when every one is a plain
        RESULT: intact, of this job and step, summing every worker, neither OVERFLOW nor CORRUPT, at the job's
        scale (one vectorised test). Then only the window is left to ask per payload. False, with nothing done,
        when any payload needs the full checks."""
        w = self.worker
        fmt = self._fmt_of.get(length)
        if fmt is None:
            return False
        head = header_view(buf, length)
        values = values_view(buf, length, fmt, w.lanes)
        ff = head["fmt_flags"]
        plain = (((ff >> 6) == fmt) & ((ff & _CHECKED_FLAGS) == P.FLAG_RESULT) & (head["job_id"] == w.job)
                 & (head["step"] == self.step) & (head["count"] == w.n_workers) & (head["exp"] == w.scale_exp))
        if not plain.all() or not np.array_equal(values.sum(axis=1, dtype=np.int64) & 0xFFFFFFFF, head["csum"]):
            return False
        stats = w.stats
        stats.packets_received += k
        self.bursts += 1
        w._answered = True
        window, have = self.window, self.have
        try_complete = window.try_complete
        taken: list[int] = []
        taken_seqs: list[int] = []
        for i, (slot, seq, vc) in enumerate(zip(head["slot"].tolist(), head["seq"].tolist(),
                                                head["ver_child"].tolist(), strict=True)):
            sends = try_complete(slot, seq, vc >> 7)
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
            if fmt != P.FMT_INT32:
                self._widen()
            self.rows[taken_seqs] = values[taken]
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

    def _one(self, payload: bytes) -> None:
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
        if exp != w.scale_exp or fmt != P.FMT_INT32:
            self._widen()
            self.rows[seq] = values.astype(np.int64) << (exp - w.scale_exp)
        else:
            self.rows[seq] = values
        self.have[seq] = 1
        self.emit(window.complete(slot, seq, version))
        if window.armed < self.check_at:
            self.check_at = window.armed  # a RACK timer this RESULT armed for a chunk it overtook
