"""A hot-standby worker's side of a replacement: restore the dead rank's protocol state from its checkpoint and
finish the collective it was in, slot by slot from where the switch says (controller/standby.py), then carry on as
an ordinary `hostagent.Worker`.

Why not simply resend the interrupted collective from chunk 0: the switch forgets a child's part in a round once
that child joined the slot's next round, so rounds the dead worker finished would be dropped as stale and the spare
would stall. The chunks before each slot's resume point were finished by the dead worker; the spare does not get
their RESULTs again (they are reported as skipped). The checkpoint is what the dead worker wrote before each call
(`write_checkpoint`): the call index, the worker's collective counter (`step` on the wire) and the version bit each
slot uses next. A run with spares fixes the shared exponent (`--exponent`), so every call is exactly one exchange
and the checkpoint needs nothing else.

This reaches into `Worker`'s protocol state (`_step`, `versions`, `_templates`, `_exchange`) on purpose: a restored
worker is the same worker, continued."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from controller.standby import Cell, resume_points
from hostagent import protocol as P
from hostagent.chunking import ChunkPlan, Reassembly
from hostagent.codec import ChunkHeaders, fill_frames, mark_retransmission, parse_payload
from hostagent.exceptions import AllReduceTimeoutError, ProtocolError


def write_checkpoint(path: Path, call: int, worker: Any) -> None:
    """The worker's protocol state before call `call` (0: the warm-up, k + 1: step k), replaced atomically."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"call": call, "step": worker._step, "bits": list(worker.versions.bits)}))
    os.replace(tmp, path)


def restore(worker: Any, checkpoint: dict[str, Any]) -> None:
    if len(checkpoint["bits"]) != len(worker.versions):
        raise ProtocolError(f"the checkpoint has {len(checkpoint['bits'])} slots, the job's pool is "
                            f"{len(worker.versions)}")
    worker._step = int(checkpoint["step"])
    worker.versions.bits = [int(b) for b in checkpoint["bits"]]


class Resume:
    """Makes the worker's next exchange a resumed one (the slots' starts from the switch's cells)."""

    def __init__(self, worker: Any, cells: list[list[list[int]]], *, timeout: float = 0.05,
                 give_up: float = 120.0) -> None:
        self.worker = worker
        self.cells = [(Cell.from_list(a), Cell.from_list(b)) for a, b in cells]
        self.timeout, self.give_up = timeout, give_up
        self.skipped: list[int] = []
        self.resends = 0
        self._orig = worker._exchange
        worker._exchange = self._first

    def _first(self, values: npt.NDArray[np.int64], fmt: int, exps: npt.NDArray[np.int64] | None = None) -> Any:
        self.worker._exchange = self._orig
        return self.exchange(values, fmt, exps)

    def exchange(self, values: npt.NDArray[np.int64], fmt: int, exps: npt.NDArray[np.int64] | None) -> Any:
        from hostagent.worker import _Exchange

        w = self.worker
        plan = ChunkPlan(values.size, w.lanes)
        n, pool = plan.n_chunks, len(w.versions)
        seqs = np.arange(n, dtype=np.int64)
        slots = seqs % pool
        vers = (np.asarray(w.versions.bits, dtype=np.int64)[slots] + seqs // pool) & 1
        step = w._step
        starts = resume_points(self.cells, step, pool)
        hdr = ChunkHeaders(job_id=w.job, child=w.child, step=step, slots=slots, versions=vers, seqs=seqs,
                           exps=np.full(n, w.scale_exp, dtype=np.int64) if exps is None else exps)
        frames = fill_frames(w._templates[fmt], fmt, hdr, plan.split(values))
        self.skipped = [k for k in range(n) if k < starts[k % pool]]
        reasm = Reassembly(plan, np.int64)
        for k in self.skipped:
            reasm.accept(k, np.zeros(plan.lanes, dtype=np.int64))  # not this spare's to receive (see the module doc)
        current = {s: starts[s] for s in range(pool) if starts[s] < n}
        overflow = False
        for k in current.values():
            w.transport.send_later(frames[k])
        w.transport.flush()
        end = time.monotonic() + self.give_up
        while current:
            payload = w.transport.recv(self.timeout)
            if payload is None:
                if time.monotonic() > end:
                    raise AllReduceTimeoutError(w.job, w.rank, self.resends, sorted(current.values()), n)
                for k in current.values():
                    mark_retransmission(frames[k])
                    w.transport.send_later(frames[k])
                    self.resends += 1
                w.transport.flush()
                continue
            r = parse_payload(payload, w.lanes)
            if (r is None or r.job_id != w.job or not r.flags & P.FLAG_RESULT or r.step != step
                    or current.get(r.slot) != r.seq or r.version != vers[r.seq]):
                continue
            if r.count != w.n_workers:
                raise ProtocolError(f"spare: the RESULT of chunk {r.seq} sums {r.count} contributions, "
                                    f"the job has {w.n_workers} workers")
            if r.flags & P.FLAG_OVERFLOW:
                overflow = True
            elif r.flags & P.FLAG_CORRUPT or not r.checksum_ok:
                continue  # resent with the others on the next quiet timeout
            reasm.accept(r.seq, r.values.astype(np.int64) << (r.exp - w.scale_exp))
            nxt = r.seq + pool
            if nxt < n:
                current[r.slot] = nxt
                w.transport.send_later(frames[nxt])
                w.transport.flush()
            else:
                del current[r.slot]
        w._step = (step + 1) & 0xFFFFFFFF
        for s in range(pool):
            if len(range(s, n, pool)) & 1:
                w.versions.bits[s] ^= 1
        return _Exchange(reasm.rows.reshape(-1), overflow)

    def skipped_elements(self, size: int) -> npt.NDArray[np.bool_]:
        """Which elements of the resumed call's tensor came in chunks this spare skipped."""
        mask = np.zeros(size, dtype=bool)
        lanes = self.worker.lanes
        for k in self.skipped:
            mask[k * lanes:(k + 1) * lanes] = True
        return mask
