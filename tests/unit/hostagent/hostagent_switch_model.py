"""A small Python model of one root aggregation switch, written from docs/protocol.md, for testing the worker's
reliability logic fast and deterministically (loss, duplication, forged packets) without the P4 pipeline.

It offers the same in-process interface as p4switch's `Switch` (`inject`, `add_output_callback`), synchronously.
The real pipeline is tested by tests/target/test_hostagent_switch.py; this model is not a substitute for it."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hostagent import protocol as P
from hostagent.codec import parse_payload
from hostagent.transport import L4_PAYLOAD

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass
class _Copy:
    bitmap: int = 0
    count: int = 0
    seq: int = -1
    sums: np.ndarray = field(default_factory=lambda: np.zeros(P.VALUES_PER_PACKET, dtype=np.int64))
    csum: int = 0
    overflow: bool = False
    result: bytes | None = None  # UDP payload of the stored RESULT


class SwitchModel:
    """Root switch of one job: `children` maps (ingress port, child index) pairs that the controller admitted."""

    def __init__(
        self,
        *,
        job: int,
        n_children: int,
        ports: list[int],
        pool_size: int,
        scale_exp: int = 0,
        loss: float = 0.0,
        dup: float = 0.0,
        seed: int = 1,
    ) -> None:
        self.job = job
        self.n_children = n_children
        self.admitted = {(port, child) for child, port in enumerate(ports)}
        self.scale_exp = scale_exp
        self.slots = [[_Copy(), _Copy()] for _ in range(pool_size)]
        self.callbacks: list[Callable[[int, bytes], None]] = []
        self.loss, self.dup = loss, dup
        self.rng = random.Random(seed)
        self.peers: dict[int, tuple[int, bytes]] = {}  # child -> (port, L2-L4 header of its DATA)
        self.counters = {"dropped_admission": 0, "duplicate": 0, "stale": 0, "answered_retx": 0, "lost": 0, "duplicated": 0}

    def add_output_callback(self, fn: Callable[[int, bytes], None]) -> None:
        self.callbacks.append(fn)

    def _emit(self, port: int, frame: bytes) -> None:
        copies = 0 if self.rng.random() < self.loss else 1
        if copies and self.rng.random() < self.dup:
            copies = 2
            self.counters["duplicated"] += 1
        if not copies:
            self.counters["lost"] += 1
        for _ in range(copies):
            for fn in self.callbacks:
                fn(port, frame)

    def _to_child(self, child: int, payload: bytes) -> None:
        port, l2l4 = self.peers[child]
        head = bytearray(l2l4)
        sport = head[34:36]
        head[34:36] = head[36:38]  # sport <- AGG_PORT
        head[36:38] = sport  # dport <- the worker's port
        self._emit(port, bytes(head) + payload)

    def inject(self, port: int, frame: bytes) -> None:
        if self.rng.random() < self.loss:
            self.counters["lost"] += 1
            return
        payload = frame[L4_PAYLOAD:]
        r = parse_payload(payload)
        if r is None or r.flags & P.FLAG_RESULT or r.job_id != self.job or (port, r.child) not in self.admitted:
            self.counters["dropped_admission"] += 1
            return
        self.peers[r.child] = (port, frame[:L4_PAYLOAD])
        cur, other = self.slots[r.slot][r.version], self.slots[r.slot][r.version ^ 1]
        bit = 1 << r.child
        if cur.bitmap & bit:
            if cur.count == 0 and cur.result is not None:
                self.counters["answered_retx"] += 1
                self._to_child(r.child, cur.result)
            else:
                self.counters["duplicate"] += 1
            return
        if cur.count and cur.seq != r.seq:
            self.counters["stale"] += 1
            return
        if cur.count == 0:
            cur.sums[:] = 0
            cur.csum = 0
            cur.overflow = False
            cur.result = None
            cur.seq = r.seq
            cur.bitmap = 0
        cur.bitmap |= bit
        other.bitmap &= ~bit
        shift = r.exp - self.scale_exp
        wide = r.values.astype(np.int64) << shift
        cur.sums += wide
        cur.csum = (cur.csum + (r.csum << shift)) & 0xFFFFFFFF
        if np.any(wide > INT32_MAX) or np.any(wide < INT32_MIN) or np.any(np.abs(cur.sums) > INT32_MAX):
            cur.overflow = True
            cur.sums = np.clip(cur.sums, INT32_MIN, INT32_MAX)
        cur.count += 1
        if cur.count == self.n_children:
            flags = P.FLAG_RESULT | (P.FLAG_OVERFLOW if cur.overflow else 0)
            head = P.AGG_HDR_STRUCT.pack(
                self.job, r.slot, P.pack_fmt_flags(P.FMT_INT32, flags), P.pack_ver_child(r.version, 0),
                self.scale_exp, 0, self.n_children, 0, r.seq, r.step, cur.csum,
            )
            cur.result = head + cur.sums.astype(">i4").tobytes()
            cur.count = 0
            for child in range(self.n_children):
                self._to_child(child, cur.result)
