"""The worker's congestion window: how many chunks it keeps in flight, as pure logic (no I/O, no clock of its own).

A job's slot pool bounds what the switch can hold, not what the path can carry: 8 workers each keeping 64 chunks in
flight on a 2 Mbit/s link queue 80 ms of packets per hop, and a software switch that serves a chunk per
millisecond queues hundreds of them. Queues that long make round trips swing and, once a buffer overflows, lose
packets. So the worker sends at most `window` chunks ahead, an AIMD window as TCP's and ATP's (in-network
aggregation's congestion control, NSDI'21):

- slow start (+1 per RESULT) up to `ssthresh`, then +1 per window's worth of RESULTs (one per round trip);
- losses halve it only when they are more than random loss explains (`loss_tolerance`): a queue that overflows
  drops a run of the packets above its capacity, while random loss on a lossy link drops a few chunks of every
  round whatever the window (at 1% per link a round of 4 workers crosses 12 links: 11% of its chunks). Halving
  on those never lets the window grow: AIMD's equilibrium under a loss rate p per chunk is about 1.2/sqrt(p)
  chunks, 4 at p = 11%. So the window halves when the losses of one round trip exceed `loss_tolerance` x the
  window, once per loss episode (NewReno: a loss of a chunk sent before the last decrease belongs to it);
  `loss_tolerance=None` halves on every episode (TCP's rule);
- a retransmission timeout halves it too and starts an episode. (TCP restarts from one segment; here a timer
  mostly fires on a tail loss or a descheduled host, and a window of one chunk per worker would leave every hop
  idle for a round trip per chunk.)
- optional (`delay_gain`, off by default): a round trip above `delay_gain` x the smallest seen shrinks the window
  by `delay_beta` x the excess fraction, at most once per round trip (Swift's rule). Off because a worker's round
  trip includes waiting for the slowest worker's contribution and for a software switch's standing queue: on
  the emulated leaf-spine at 2 Mbit/s it cut every worker's window to 1-2 chunks with no queue to drain (11.2 s
  per step against 8.0 s without it). For the same reason a loss is not judged by its round trip
  (docs/protocol.md has the measurements).

Chunks are stamped with a send counter by the caller (`SlotWindow`), which restarts with every exchange
(`restart()`); the episode and round rules compare stamps."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CongestionStats:
    """Counters of what drove the window (for `WorkerStats` and benchmarks)."""

    loss_decreases: int = 0
    delay_decreases: int = 0
    timeout_resets: int = 0
    tolerated_losses: int = 0  # losses within `loss_tolerance`: resent, the window kept


class CongestionWindow:
    """Chunks a worker may keep outstanding. Lives as long as the worker: the path outlives one all-reduce."""

    def __init__(
        self,
        max_window: int,
        *,
        initial: float = 4.0,
        min_window: float = 1.0,
        delay_gain: float | None = None,
        delay_beta: float = 0.5,
        max_decrease: float = 0.5,
        loss_tolerance: float | None = 0.25,
    ) -> None:
        if max_window < 1:
            raise ValueError(f"max_window must be at least 1, not {max_window}")
        self.max_window = float(max_window)
        self.min_window = min(max(min_window, 1.0), self.max_window)
        self.window = min(max(initial, self.min_window), self.max_window)
        self.ssthresh = self.max_window
        self.delay_gain = delay_gain
        self.delay_beta = delay_beta
        self.max_decrease = max_decrease
        self.loss_tolerance = loss_tolerance
        self.min_rtt: float | None = None
        self.stats = CongestionStats()
        self._episode_end = -1  # stamp: losses of chunks sent up to here belong to the last decrease
        self._delay_hold = -1  # stamp: no delay decrease until a chunk sent after the last one is answered
        self._round_end = -1  # stamp: the round trip ends when a chunk sent after it is answered
        self._round_losses = 0  # losses found in the current round trip

    def restart(self) -> None:
        """A new exchange: its send stamps start again from 1, so the stamps of episodes and rounds are forgotten
        (the window and ssthresh stay: they describe the path)."""
        self._episode_end = self._delay_hold = self._round_end = -1
        self._round_losses = 0

    @property
    def allowed(self) -> int:
        """Whole chunks that may be in flight now."""
        return int(self.window)

    def on_result(self, stamp: int, rtt: float | None, next_stamp: int) -> None:
        """A RESULT answered the chunk sent with `stamp`; `rtt` is its round trip if unambiguous (Karn's rule);
        `next_stamp` is the stamp the next send will get (a decrease now covers everything sent before it)."""
        if stamp > self._round_end:
            self._round_end, self._round_losses = next_stamp - 1, 0
        if rtt is not None and rtt > 0:
            self.min_rtt = rtt if self.min_rtt is None else min(self.min_rtt, rtt)
            if self._delayed(rtt) and stamp > self._delay_hold:
                assert self.min_rtt is not None and self.delay_gain is not None
                target = self.delay_gain * self.min_rtt
                cut = min(self.max_decrease, self.delay_beta * (rtt - target) / rtt)
                self.window = max(self.min_window, self.window * (1 - cut))
                self.ssthresh = self.window
                self._delay_hold = next_stamp - 1
                self.stats.delay_decreases += 1
                return
        if self.window < self.ssthresh:
            self.window = min(self.window + 1, self.max_window)
        else:
            self.window = min(self.window + 1 / self.window, self.max_window)

    def _delayed(self, rtt: float) -> bool:
        return self.delay_gain is not None and self.min_rtt is not None and rtt > self.delay_gain * self.min_rtt

    def on_loss(self, stamp: int, next_stamp: int) -> bool:
        """The chunk sent with `stamp` was lost; True when the window was halved: the losses of this round trip
        exceed the tolerance and this starts a new episode."""
        self._round_losses += 1
        if self.loss_tolerance is not None and self._round_losses <= self.loss_tolerance * self.window:
            self.stats.tolerated_losses += 1
            return False
        if stamp <= self._episode_end:
            return False
        self.window = max(self.min_window, self.window / 2)
        self.ssthresh = self.window
        self._episode_end = next_stamp - 1
        self._delay_hold = max(self._delay_hold, next_stamp - 1)
        self.stats.loss_decreases += 1
        return True

    def on_timeout(self, next_stamp: int) -> None:
        """A retransmission timer expired: halve the window (see the module's docstring for why not to one)."""
        self.window = max(self.min_window, self.window / 2)
        self.ssthresh = self.window
        self._episode_end = next_stamp - 1
        self._delay_hold = max(self._delay_hold, next_stamp - 1)
        self.stats.timeout_resets += 1
