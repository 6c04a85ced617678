"""The slot window, its loss detection and its retransmission timers (SwitchML's slots, TCP's recovery), as pure logic.

A job owns `n_slots` aggregation slots in the switch. Chunk `seq` always uses slot `seq % n_slots` and chunks are
sent in order; a slot's next chunk (`seq + n_slots`) can be sent only once the RESULT of its current chunk arrived,
so the switch never needs more than `n_slots` slots per job. How many chunks are in flight below that is the
congestion window's (`hostagent.congestion`). Each use of a slot flips its version bit. The switch keeps one copy
per version, so a retransmission of the previous use still finds its stored result and a new use clears the stale
copy: slots are reused without any controller reset. Versions therefore persist across all-reduce calls
(`SlotVersions`), and every worker of a job walks the same sequence of (slot, version).

Losses are found without a timer (RACK, RFC 8985): every worker sends its chunks in the same order and each hop is
FIFO, so a RESULT for a chunk this worker sent after chunk X, while X is still unanswered, means a contribution to
X or X's RESULT was lost. X is resent once it is older than the latest round trip plus a reordering allowance of a
quarter of the smallest round trip. The retransmission timer (RFC 6298, from measured round trips) is the last
resort, for a loss with nothing sent after it (the tail of a collective) or when every RESULT stops.

Nothing here does I/O: the worker feeds it results and the clock and sends what it returns, so the logic is
tested without packets or sleeping."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from hostagent.congestion import CongestionWindow
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
    answered without a retransmission are sampled (Karn's rule). Lives as long as the worker, like the versions.

    The timeout is also at least `srtt_factor` x SRTT (RACK-TLP's probe timeout is 2 SRTT): losses within a
    stream are found by later RESULTs, so the timer is only the last resort and need not be tight, while a host
    descheduled for a round trip would otherwise fire it on chunks that were never lost. For the same reason it
    is at least `peak_factor` x the largest recent round trip (`peak_rtt`, which decays by `peak_decay` per
    sample, about a thousand samples to halve): on a shaped link behind loaded software switches round trips
    come in spikes that a smoothed mean and deviation forget between two of them."""

    def __init__(self, initial: float, *, min_rto: float = 0.01, max_rto: float = 1.0,
                 srtt_factor: float = 2.0, peak_factor: float = 1.5, peak_decay: float = 0.999) -> None:
        self.min_rto, self.max_rto = min_rto, max(max_rto, min_rto)
        self.srtt_factor = srtt_factor
        self.peak_factor, self.peak_decay = peak_factor, peak_decay
        self.peak_rtt = 0.0
        self.rto = min(max(initial, min_rto), self.max_rto)
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.samples = 0
        self.min_rtt: float | None = None

    def sample(self, rtt: float) -> None:
        self.min_rtt = rtt if self.min_rtt is None else min(self.min_rtt, rtt)
        self.peak_rtt = max(rtt, self.peak_rtt * self.peak_decay)
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self.samples += 1
        floor = max(self.srtt_factor * self.srtt, self.peak_factor * self.peak_rtt, self.min_rto)
        self.rto = min(max(self.srtt + 4 * self.rttvar, floor), self.max_rto)

    def backoff(self) -> None:
        """A timer expired: double the RTO until a clean sample arrives (RFC 6298, 5.5). Without this, only the
        chunks answered before a too-short timeout are sampled, and the estimate never grows out of it."""
        self.rto = min(self.rto * 2, self.max_rto)


class Send(NamedTuple):
    """One packet to (re)send: chunk `seq` into `slot` with `version`; `retry` > 0 marks a retransmission.
    (A named tuple: one is made per packet, and a frozen dataclass costs several times as much to build.)"""

    slot: int
    seq: int
    version: int
    retry: int = 0


@dataclass(slots=True)
class _Outstanding:
    seq: int
    version: int
    deadline: float  # the retransmission timer, or sooner the RACK timer of an overtaken chunk
    retries: int
    timeout: float
    sent_at: float  # of the latest (re)send
    sampled: bool  # whether its round trip may update the RTT estimate
    stamp: int  # send counter at the latest (re)send: orders sends, retransmissions included
    first_stamp: int  # send counter at the first send: what a RESULT proves about chunks sent before it
    first_sent_at: float = 0.0
    overtaken: bool = False  # a chunk sent after its latest send was answered: lost once old enough


class SlotWindow:
    """Which chunks are in flight, when to resend one, and which RESULTs are genuine.

    `timeout` is the first retransmission timeout (or, with `rtt`, the estimator's current RTO); each timer expiry
    of the same chunk multiplies it by `backoff` up to `max_timeout`. After `max_retries` retransmissions of one
    chunk without a RESULT, `expired()` raises `AllReduceTimeoutError` listing every chunk still missing.
    `congestion` (None: every slot in flight, SwitchML's fixed window) limits the chunks in flight; `fast_recovery`
    resends overtaken chunks without waiting for their timer and probes before a full timeout. Counters:
    `retransmissions` (all), `fast_retransmissions` (found lost by a later RESULT), `probes` (tail loss probes),
    `timer_retransmissions` (a full retransmission timeout)."""

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
        congestion: CongestionWindow | None = None,
        fast_recovery: bool = True,
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
        self.congestion = congestion
        if congestion is not None:
            congestion.restart()  # this window's stamps start from 1 again
        self.fast_recovery = fast_recovery
        # Insertion order is send order: a resend moves its chunk to the end, so the oldest send comes first.
        self._slots: dict[int, _Outstanding] = {}
        self._next_seq = 0
        self._stamp = 0
        self._done = 0
        self._started = False
        self.retransmissions = 0
        self.fast_retransmissions = 0
        self.timer_retransmissions = 0
        #: The earliest RACK timer the last `complete()` armed (inf: none), so a caller need not rescan every timer.
        self.armed = float("inf")
        self.probes = 0  # tail loss probes sent (also counted in `retransmissions`)
        self.spurious = 0  # resends found spurious: their RESULT answered the first send
        self._probed = False  # a probe went out and no RESULT came since
        self._probe_at = float("inf")  # the probe timer (`_arm_probe`): 2 SRTT after the last send or RESULT
        # Where the time goes (instrumentation, no effect on the rules): seconds the next chunk waited for its slot
        # (its previous use unanswered) or for room in the window, and the drain after the last new chunk left.
        self.blocked_slot = 0.0
        self.blocked_window = 0.0
        self._blocked_on: str | None = None  # "slot" or "window" while the next chunk cannot leave
        self._blocked_since = 0.0
        self.last_issued_at: float | None = None  # when the last new chunk left
        self.finished_at: float | None = None  # when the last RESULT came

    # -- sending -------------------------------------------------------------------------------------------------

    def start(self) -> list[Send]:
        """The first chunks: one per slot, or as many as the congestion window allows.

        Their RESULTs also wait for the last worker to start the collective, so their timers get at least the
        configured `timeout` (a skew allowance) and their round trips are not sampled: they measure skew, not RTT."""
        sends = self._fill(first=True)
        self._started = True
        return sends

    def _limit(self) -> int:
        if self.congestion is None:
            return self.n_slots
        return max(1, min(self.n_slots, self.congestion.allowed))

    def _fill(self, first: bool = False, now: float | None = None) -> list[Send]:
        """New chunks, in order, while the window has room and the next chunk's slot is free. `now`: the caller's
        clock reading (chunks issued in one call leave together), read here if None."""
        out: list[Send] = []
        limit = self._limit()
        slots = self._slots
        seq = self._next_seq
        if seq >= self.n_chunks:
            return out
        if now is None:
            now = self.clock()
        while seq < self.n_chunks and len(slots) < limit:
            slot = seq % self.n_slots
            if slot in slots:
                break  # its previous use is still unanswered: the slot pool, not the window, is the limit
            out.append(self._issue(slot, seq, now, first))
            seq += 1
        blocked = None if seq >= self.n_chunks else "window" if len(slots) >= limit else "slot"
        self._next_seq = seq
        self._account(blocked, now)
        if out and seq >= self.n_chunks:
            self.last_issued_at = now
        return out

    def _account(self, blocked: str | None, now: float) -> None:
        """Charge the time since the last `_fill` to what blocked the next chunk then; remember what blocks it now."""
        if self._blocked_on == "slot":
            self.blocked_slot += now - self._blocked_since
        elif self._blocked_on == "window":
            self.blocked_window += now - self._blocked_since
        self._blocked_on, self._blocked_since = blocked, now

    def _issue(self, slot: int, seq: int, now: float, first: bool = False) -> Send:
        version = self.versions.bits[slot]
        timeout = self.rtt.rto if self.rtt is not None else self.timeout
        if first:
            timeout = max(timeout, self.timeout)
        self._stamp += 1
        self._slots[slot] = _Outstanding(seq, version, now + timeout, 0, timeout, now, not first, self._stamp,
                                         self._stamp, now)
        return Send(slot, seq, version)

    def _resend(self, slot: int, out: _Outstanding, now: float, *, counted: bool = True) -> Send:
        """Resend `out` now: a new stamp (moved to the end of the send order), its timer rearmed; `counted`: the
        resend uses up one of the chunk's `max_retries`."""
        del self._slots[slot]
        self._stamp += 1
        out.stamp, out.sent_at, out.overtaken = self._stamp, now, False
        if counted:
            out.retries += 1
        out.deadline = now + out.timeout
        self._slots[slot] = out
        self.retransmissions += 1
        return Send(slot, out.seq, out.version, max(out.retries, 1))

    # -- receiving -----------------------------------------------------------------------------------------------

    def expects(self, slot: int, seq: int, version: int) -> bool:
        """True when a RESULT for (slot, seq, version) answers the chunk outstanding in that slot."""
        cur = self._slots.get(slot)
        return cur is not None and cur.seq == seq and cur.version == version

    def complete(self, slot: int, seq: int, version: int, now: float | None = None) -> list[Send]:
        """Record the RESULT of the chunk outstanding in `slot`; returns what to send now: resends of chunks this
        RESULT shows lost, then new chunks the window has room for. `now`: the clock when the RESULT was taken in
        (a burst of them shares one reading), read here if None.

        Call only after `expects()` returned True: a stale, duplicated or forged RESULT must be dropped first."""
        sends = self.try_complete(slot, seq, version, now)
        if sends is None:
            raise ValueError(f"no chunk {seq} (version {version}) outstanding in slot {slot}")
        return sends

    def try_complete(self, slot: int, seq: int, version: int, now: float | None = None) -> list[Send] | None:
        """`complete()` when `expects()` holds, else None and nothing changes: one lookup for both."""
        done = self._slots.get(slot)
        if done is None or done.seq != seq or done.version != version:
            return None
        del self._slots[slot]
        if now is None:
            now = self.clock()
        rtt = now - done.sent_at if done.retries == 0 and done.sampled else None
        if rtt is None and done.retries and done.sampled and self._spurious(done, now):
            # Answered sooner after the resend than any round trip: the RESULT is the first send's, the resend was
            # spurious, and its round trip is what the timeout failed to cover (Karn's rule would hide it forever).
            rtt = now - done.first_sent_at
            self.spurious += 1
        if self.rtt is not None and rtt is not None:
            self.rtt.sample(rtt)
        if self.congestion is not None:
            self.congestion.on_result(done.stamp, rtt, self._stamp + 1)
        self.versions.bits[slot] ^= 1
        self._done += 1
        if self._done == self.n_chunks:
            self.finished_at = now
        self._probed = False
        self.armed = float("inf")
        self._probe_at = float("inf")  # rearmed below while nothing more can be sent
        if self.fast_recovery and self._slots:
            sends = self._detect(done, now)
            sends.extend(self._fill(now=now))
            self._arm_probe(now)
            return sends
        return self._fill(now=now)

    def _arm_probe(self, now: float) -> None:
        """When nothing more can be sent, a RESULT restarts the probe timer at 2 SRTT (RACK-TLP's probe timeout):
        in the drain (every chunk sent, some unanswered), and while the next chunk waits for its slot (its
        previous use, the oldest chunk, unanswered: with RESULTs in send order, a loss that RACK resent). Either
        way no later send can show a loss, and the chunks' own timers carry the retransmission timeout's floors
        (1.5x the largest recent round trip, which includes other workers' stalls: 10-25x SRTT was measured),
        which a probe need not wait for: it only resends one chunk. Otherwise the chunks' own timers do."""
        stalled = self._next_seq >= self.n_chunks or self._blocked_on == "slot"
        if not stalled or self.rtt is None or self.rtt.srtt is None:
            self._probe_at = float("inf")
            return
        self._probe_at = now + max(self.rtt.srtt_factor * self.rtt.srtt, self.rtt.min_rto)
        self.armed = min(self.armed, self._probe_at)

    def _spurious(self, done: _Outstanding, now: float) -> bool:
        """True when a resent chunk's RESULT came less than a quarter of the smallest round trip after the resend:
        too soon to answer it, even from a leaf's stored copy (half the path), so it answers the first send."""
        min_rtt = self.rtt.min_rtt if self.rtt is not None else None
        return min_rtt is not None and now - done.sent_at < min_rtt / 4

    def _reorder_allowance(self) -> float:
        """RACK's reordering window: a quarter of the smallest round trip (0 before any is measured)."""
        min_rtt = self.rtt.min_rtt if self.rtt is not None else None
        return min_rtt / 4 if min_rtt is not None else 0.0

    def _detect(self, done: _Outstanding, now: float) -> list[Send]:
        """Chunks whose latest send came before `done`'s first send are overtaken: resend those older than the
        latest round trip plus the reordering allowance, arm a RACK timer for the others."""
        if next(iter(self._slots.values())).stamp >= done.first_stamp:
            return []  # the oldest send still out came after `done`: nothing overtaken (in-order RESULTs)
        latest_rtt = now - done.sent_at
        allowance = self._reorder_allowance()
        lost: list[tuple[int, _Outstanding]] = []
        for slot, out in self._slots.items():
            if out.stamp >= done.first_stamp:
                break  # send order: everything from here on was sent after `done`
            out.overtaken = True
            due = out.sent_at + latest_rtt + allowance
            if due <= now:
                lost.append((slot, out))
            else:
                out.deadline = min(out.deadline, due)
                self.armed = min(self.armed, due)
        return self._lost(lost, now)

    def _lost(self, lost: list[tuple[int, _Outstanding]], now: float) -> list[Send]:
        sends = []
        for slot, out in lost:
            if out.retries >= self.max_retries:
                raise AllReduceTimeoutError(self.job, self.rank, self.max_retries, self.missing(), self.n_chunks)
            if self.congestion is not None:
                self.congestion.on_loss(out.stamp, self._stamp + 1)
            if self.rtt is not None:
                out.timeout = max(out.timeout, self.rtt.rto)  # the chunk's timer stays the last resort
            sends.append(self._resend(slot, out, now))
            self.fast_retransmissions += 1
        return sends

    @property
    def drain(self) -> float:
        """Seconds from the last new chunk's send to the last RESULT (0 until finished): a lossless exchange drains
        in about one round trip; a loss among the last chunks, with no later RESULT to show it, takes longer."""
        if self.finished_at is None or self.last_issued_at is None:
            return 0.0
        return self.finished_at - self.last_issued_at

    @property
    def finished(self) -> bool:
        return self._done == self.n_chunks

    @property
    def outstanding(self) -> int:
        return len(self._slots)

    @property
    def issuing(self) -> bool:
        """True while new chunks remain to be sent."""
        return self._next_seq < self.n_chunks

    # -- timers --------------------------------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """The earliest timer (retransmission, RACK or the probe timer), or None when nothing is outstanding."""
        if not self._slots:
            return None
        return min(min(o.deadline for o in self._slots.values()), self._probe_at)

    def expired(self) -> list[Send]:
        """Chunks whose timer ran out. An overtaken chunk's RACK timer resends it as a loss found by a later RESULT.
        With fast recovery, the first timer to expire after a RESULT (a chunk's retransmission timer or, when
        nothing more can be sent, the probe timer of 2 SRTT: `_arm_probe`) sends one probe, the most recently sent chunk, and
        restarts every chunk's timer (RACK-TLP's tail loss probe): if the tail was lost the probe
        recovers it, and its RESULT shows any earlier loss to RACK; if the path only stalled, one packet was resent,
        not the whole window. A timer expiring again with no RESULT since is a full timeout: the oldest expired
        chunk is resent with a longer timeout (every expired chunk without fast recovery; raises after
        `max_retries` for a chunk), the congestion window halves and the RTO backs off. Then new chunks if the
        window has room."""
        now = self.clock()
        overtaken: list[tuple[int, _Outstanding]] = []
        timed_out: list[tuple[int, _Outstanding]] = []
        for slot, out in self._slots.items():
            if out.deadline <= now:
                (overtaken if out.overtaken else timed_out).append((slot, out))
        due = self._lost(overtaken, now)
        probe = bool(timed_out) or (now >= self._probe_at and bool(self._slots))
        if probe and self.fast_recovery and not self._probed:
            self._probed = True
            self._probe_at = float("inf")
            # The retransmission timer restarts with the probe (RFC 8985, 7.3): a full timeout waits a whole
            # timeout for every chunk, so the probe has a round trip to be answered before the window halves.
            for out in self._slots.values():
                if not out.overtaken:
                    out.deadline = max(out.deadline, now + out.timeout)
            slot = next(reversed(self._slots))  # send order: the newest send is the last
            if self._slots[slot].retries >= self.max_retries:
                raise AllReduceTimeoutError(self.job, self.rank, self.max_retries, self.missing(), self.n_chunks)
            due.append(self._resend(slot, self._slots[slot], now))
            self.probes += 1
            return due + self._fill(now=now)
        if due and self.fast_recovery:
            self._arm_probe(now)  # RACK resent: if that is lost too and nothing more can be sent, a probe follows
        if timed_out and self.fast_recovery:
            # As TCP after a timeout: resend the oldest chunk only and rearm the others. If the path only stalled,
            # their RESULTs come; if they were lost, the oldest one's RESULT shows it (RACK), one round trip later.
            for _slot, out in timed_out[1:]:
                out.deadline = now + out.timeout
            timed_out = timed_out[:1]
        for slot, out in timed_out:
            if out.retries >= self.max_retries:
                raise AllReduceTimeoutError(self.job, self.rank, self.max_retries, self.missing(), self.n_chunks)
            out.timeout = min(out.timeout * self.backoff, self.max_timeout)
            due.append(self._resend(slot, out, now))
            self.timer_retransmissions += 1
        if timed_out:
            if self.rtt is not None:
                self.rtt.backoff()
            if self.congestion is not None:
                self.congestion.on_timeout(self._stamp + 1)
        return due + self._fill(now=now) if due else due

    def retry_now(self, slot: int) -> Send | None:
        """Resend a slot's chunk at once (a RESULT failed its checksum); counts as a retransmission."""
        out = self._slots.get(slot)
        if out is None:
            return None
        return self._resend(slot, out, self.clock(), counted=False)

    def missing(self) -> list[int]:
        """Chunk numbers without a RESULT yet: the outstanding ones and all those not sent yet."""
        return sorted([o.seq for o in self._slots.values()] + list(range(self._next_seq, self.n_chunks)))
