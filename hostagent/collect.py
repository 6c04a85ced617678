"""One exchange's receive side: bursts of RESULT payloads checked, reassembled and fed to the window.

A worker wakes up to many RESULTs at once (`Transport.recv_many`). Payloads of one length are joined and read as
a structured numpy array (`codec.header_view`/`values_view`): their header fields come out as Python lists, their
checksums in one row sum and their values are stored in one fancy-indexed assignment, so the Python left per
packet is the acceptance checks and the window's bookkeeping. The checks and their order are those of
docs/protocol.md ("a worker accepts a RESULT if ..."), exactly as a packet at a time (`codec.parse_payload`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from hostagent import protocol as P
from hostagent.codec import header_view, mark_retransmission, values_view
from hostagent.exceptions import ProtocolError
from hostagent.window import Send, SlotWindow

if TYPE_CHECKING:
    from hostagent.worker import Worker

_FIELDS = ("job_id", "slot", "fmt_flags", "ver_child", "exp", "count", "seq", "step")
_CHECKED_FLAGS = P.FLAG_RESULT | P.FLAG_OVERFLOW | P.FLAG_CORRUPT


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
        length = len(batch[0])
        if len(batch) == 1:
            self._handle(batch[0], length, 1)
        elif all(len(p) == length for p in batch):
            self._handle(b"".join(batch), length, len(batch))
        else:
            for p in batch:  # mixed lengths (another job's or malformed packets): one at a time, in order
                self._handle(p, len(p), 1)

    def _handle(self, buf: bytes, length: int, k: int) -> None:
        """`k` payloads of `length` bytes each, end to end in `buf`."""
        w = self.worker
        stats = w.stats
        stats.packets_received += k
        if length < P.AGG_HDR_LEN:
            stats.ignored += k
            return
        head = header_view(buf, length)
        # Only the format whose RESULT is exactly `length` bytes can be accepted: others are short (ignored) or
        # long (refused below), so its values and checksums are all this burst needs.
        fmt_ok = self._fmt_of.get(length)
        window, have = self.window, self.have
        taken: list[int] = []
        taken_seqs: list[int] = []
        shifts: list[int] = []
        if fmt_ok is not None:
            values = values_view(buf, length, fmt_ok, w.lanes)
            sums_ok = (values.sum(axis=1, dtype=np.int64) & 0xFFFFFFFF) == head["csum"]
            # The common case in one vectorised test: an intact RESULT of this step and job, summing every
            # worker, neither OVERFLOW nor CORRUPT, at the job's scale. Only the window is left to ask.
            ff = head["fmt_flags"]
            plain = (sums_ok & ((ff >> 6) == fmt_ok) & ((ff & _CHECKED_FLAGS) == P.FLAG_RESULT)
                     & (head["job_id"] == w.job) & (head["step"] == self.step) & (head["count"] == w.n_workers)
                     & (head["exp"] == w.scale_exp))
            if plain.all():
                w._answered = True
                n = self.n
                try_complete = window.try_complete
                for i, (slot, seq, vc) in enumerate(zip(head["slot"].tolist(), head["seq"].tolist(),
                                                        head["ver_child"].tolist(), strict=True)):
                    sends = try_complete(slot, seq, vc >> 7)
                    if sends is None:
                        if 0 <= seq < n and have[seq]:
                            stats.duplicates += 1
                        else:
                            stats.ignored += 1
                        continue
                    have[seq] = 1
                    taken.append(i)
                    taken_seqs.append(seq)
                    if sends:
                        self.emit(sends)
                    if window.armed < self.check_at:
                        self.check_at = window.armed  # a RACK timer this RESULT armed for a chunk it overtook
                shifts = [0] * len(taken)
            else:
                self._checked(head, length, sums_ok.tolist(), taken, taken_seqs, shifts)
        else:
            self._checked(head, length, [False] * k, taken, taken_seqs, shifts)
        if taken:
            wide = any(shifts) or fmt_ok != P.FMT_INT32
            if wide and self.rows.dtype != np.int64:
                self.rows = self.rows.astype(np.int64)
            if wide:
                units = values[taken].astype(np.int64)
                units <<= np.asarray(shifts, dtype=np.int64)[:, None]
                self.rows[taken_seqs] = units
            else:
                self.rows[taken_seqs] = values[taken]

    def _checked(self, head: npt.NDArray[np.void], length: int, sums_ok: list[bool], taken: list[int],
                 taken_seqs: list[int], shifts: list[int]) -> None:
        """Every check of docs/protocol.md one payload at a time, in order: a burst with anything unusual in it.
        Appends the accepted payloads' indices, chunks and exponent shifts to `taken`, `taken_seqs`, `shifts`."""
        w = self.worker
        stats = w.stats
        jobs, slots, ffs, vcs, exps, counts, seqs, steps = (head[f].tolist() for f in _FIELDS)
        window, need, have = self.window, self._need, self.have
        job, step, n_workers, scale_exp, n = w.job, self.step, w.n_workers, w.scale_exp, self.n
        for i in range(len(jobs)):
            ff = ffs[i]
            fmt = ff >> 6
            size = need.get(fmt)
            if size is None or length < size or jobs[i] != job or not ff & P.FLAG_RESULT or steps[i] != step:
                stats.ignored += 1
                continue
            if length != size:
                raise ProtocolError(
                    f"job {job}: a RESULT of {length} bytes carries {P.lanes_of(fmt, length)} values per packet, "
                    f"this worker packs {w.lanes}: the pipeline and the worker disagree")
            w._answered = True
            slot, seq, version = slots[i], seqs[i], vcs[i] >> 7
            if not window.expects(slot, seq, version):
                if 0 <= seq < n and have[seq]:
                    stats.duplicates += 1
                else:
                    stats.ignored += 1
                continue
            if counts[i] != n_workers:
                raise ProtocolError(
                    f"job {job}: the RESULT of chunk {seq} sums {counts[i]} contributions but the job has "
                    f"{n_workers} workers: the switches' job entries and the workers disagree"
                )
            if ff & P.FLAG_OVERFLOW:
                self.overflow = True  # the values are clamped; the caller redoes the collective
            elif ff & P.FLAG_CORRUPT or not sums_ok[i]:
                stats.checksum_failures += 1
                retry = window.retry_now(slot)
                if retry is not None:
                    self.emit((retry,))
                continue
            if exps[i] < scale_exp:
                raise ProtocolError(f"RESULT exponent {exps[i]} below the job's scale {scale_exp}")
            have[seq] = 1
            taken.append(i)
            taken_seqs.append(seq)
            shifts.append(exps[i] - scale_exp)
            self.emit(window.complete(slot, seq, version))
            self.check_at = min(self.check_at, window.armed)  # a RACK timer this RESULT armed for a chunk it overtook
