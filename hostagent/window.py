"""The self-clocked slot window and its retransmission timers (SwitchML's scheme), as pure logic.

A job owns `n_slots` aggregation slots in the switch. Chunk `seq` always uses slot `seq % n_slots`; a slot's next
chunk (`seq + n_slots`) is sent only when the RESULT of its current chunk arrived, so the sending rate follows the
slowest worker and the switch never needs more than `n_slots` slots per job. Each use of a slot flips its version
bit. The switch keeps one copy per version, so a retransmission of the previous use still finds its stored result
and a new use clears the stale copy: slots are reused without any controller reset. Versions therefore persist
across all-reduce calls (`SlotVersions`), and every worker of a job walks the same sequence of (slot, version).

Nothing here does I/O: the worker feeds it results and the clock and sends what it returns, so the logic is
tested without packets or sleeping."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hostagent.exceptions import AllReduceTimeoutError


class SlotVersions:
    """The version bit each slot will use next. Lives as long as the worker: the switch remembers it too."""

    def __init__(self, n_slots: int) -> None:
        if n_slots <= 0:
            raise ValueError(f"n_slots must be positive, not {n_slots}")
        self.bits = [0] * n_slots

    def __len__(self) -> int:
        return len(self.bits)


class RttEstimator:
    """Retransmission timeout from measured round trips (RFC 6298: SRTT + 4 RTTVAR, clamped), so that a slow,
    loaded switch does not drown in spurious retransmissions and a fast one recovers losses quickly. Only chunks
    answered without a retransmission are sampled (Karn's rule). Lives as long as the worker, like the versions."""

    def __init__(self, initial: float, *, min_rto: float = 0.01, max_rto: float = 1.0) -> None:
        self.min_rto, self.max_rto = min_rto, max(max_rto, min_rto)
        self.rto = min(max(initial, min_rto), self.max_rto)
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.samples = 0

    def sample(self, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self.samples += 1
        self.rto = min(max(self.srtt + 4 * self.rttvar, self.min_rto), self.max_rto)

    def backoff(self) -> None:
        """A timer expired: double the RTO until a clean sample arrives (RFC 6298, 5.5). Without this, only the
        chunks answered before a too-short timeout are sampled, and the estimate never grows out of it."""
        self.rto = min(self.rto * 2, self.max_rto)


@dataclass(frozen=True)
class Send:
    """One packet to (re)send: chunk `seq` into `slot` with `version`; `retry` > 0 marks a retransmission."""

    slot: int
    seq: int
    version: int
    retry: int = 0


@dataclass
class _Outstanding:
    seq: int
    version: int
    deadline: float
    retries: int
    timeout: float
    sent_at: float
    sampled: bool  # whether its round trip may update the RTT estimate


class SlotWindow:
    """Which chunk each slot carries, when to retransmit it, and which RESULTs are genuine.

    `timeout` is the first retransmission timeout (or, with `rtt`, the estimator's current RTO); each retransmission
    of the same chunk multiplies it by `backoff` up to `max_timeout`. After `max_retries` retransmissions of one chunk without a RESULT,
    `expired()` raises `AllReduceTimeoutError` listing every chunk still missing."""

    def __init__(
        self,
        n_chunks: int,
        versions: SlotVersions,
        *,
        timeout: float,
        max_retries: int,
        clock: Callable[[], float],
        backoff: float = 2.0,
        max_timeout: float = 1.0,
        job: int = 0,
        rank: int = 0,
        rtt: RttEstimator | None = None,
    ) -> None:
        self.n_chunks = n_chunks
        self.versions = versions
        self.n_slots = len(versions)
        self.timeout = timeout
        self.backoff = backoff
        self.max_timeout = max(max_timeout, timeout)
        self.max_retries = max_retries
        self.clock = clock
        self.job = job
        self.rank = rank
        self.rtt = rtt
        self._slots: dict[int, _Outstanding] = {}
        self._done = 0
        self.retransmissions = 0

    # -- sending -------------------------------------------------------------------------------------------------

    def start(self) -> list[Send]:
        """The first window: one chunk per slot (fewer when the tensor has fewer chunks than slots).

        Its RESULTs also wait for the last worker to start the collective, so their timers get at least the
        configured `timeout` (a skew allowance) and their round trips are not sampled: they measure skew, not RTT."""
        return [self._issue(seq % self.n_slots, seq, first=True) for seq in range(min(self.n_chunks, self.n_slots))]

    def _issue(self, slot: int, seq: int, first: bool = False) -> Send:
        version = self.versions.bits[slot]
        now = self.clock()
        timeout = self.rtt.rto if self.rtt is not None else self.timeout
        if first:
            timeout = max(timeout, self.timeout)
        self._slots[slot] = _Outstanding(seq, version, now + timeout, 0, timeout, now, not first)
        return Send(slot, seq, version)

    # -- receiving -----------------------------------------------------------------------------------------------

    def expects(self, slot: int, seq: int, version: int) -> bool:
        """True when a RESULT for (slot, seq, version) answers the chunk outstanding in that slot."""
        cur = self._slots.get(slot)
        return cur is not None and cur.seq == seq and cur.version == version

    def complete(self, slot: int, seq: int, version: int) -> Send | None:
        """Record the RESULT of the chunk outstanding in `slot`; returns the slot's next chunk to send, if any.

        Call only after `expects()` returned True: a stale, duplicated or forged RESULT must be dropped first."""
        if not self.expects(slot, seq, version):
            raise ValueError(f"no chunk {seq} (version {version}) outstanding in slot {slot}")
        done = self._slots.pop(slot)
        if self.rtt is not None and done.retries == 0 and done.sampled:
            self.rtt.sample(self.clock() - done.sent_at)
        self.versions.bits[slot] ^= 1
        self._done += 1
        nxt = seq + self.n_slots
        return self._issue(slot, nxt) if nxt < self.n_chunks else None

    @property
    def finished(self) -> bool:
        return self._done == self.n_chunks

    @property
    def outstanding(self) -> int:
        return len(self._slots)

    # -- timers --------------------------------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """The earliest retransmission deadline, or None when nothing is outstanding."""
        return min((o.deadline for o in self._slots.values()), default=None)

    def expired(self) -> list[Send]:
        """Chunks whose timer ran out, rearmed with a longer timeout; raises after `max_retries` for a chunk."""
        now = self.clock()
        due: list[Send] = []
        for slot, out in self._slots.items():
            if out.deadline > now:
                continue
            if out.retries >= self.max_retries:
                raise AllReduceTimeoutError(self.job, self.rank, self.max_retries, self.missing(), self.n_chunks)
            out.retries += 1
            out.timeout = min(out.timeout * self.backoff, self.max_timeout)
            out.deadline = now + out.timeout
            self.retransmissions += 1
            due.append(Send(slot, out.seq, out.version, out.retries))
        if due and self.rtt is not None:
            self.rtt.backoff()
        return due

    def retry_now(self, slot: int) -> Send | None:
        """Resend a slot's chunk at once (a RESULT failed its checksum); counts as a retransmission."""
        out = self._slots.get(slot)
        if out is None:
            return None
        out.deadline = self.clock() + out.timeout
        self.retransmissions += 1
        return Send(slot, out.seq, out.version, out.retries + 1)

    def missing(self) -> list[int]:
        """Chunk numbers without a RESULT yet: the outstanding ones and all those not sent yet."""
        sent_pending = sorted(o.seq for o in self._slots.values())
        unsent: list[int] = []
        for slot in range(self.n_slots):
            out = self._slots.get(slot)
            if out is None:
                continue
            unsent.extend(range(out.seq + self.n_slots, self.n_chunks, self.n_slots))
        return sorted(sent_pending + unsent)
