"""The threaded v1model switch: the object the P4Runtime server, the CLI and in-process tests drive.

Threads: one pipeline worker and one delay-line thread for impaired frames. The worker serves the traffic manager
first (any packet allowed to leave goes through egress), then the input buffer (resubmitted/recirculated packets
before new ones, as BMv2's input buffer does), in batches of up to `WORK_BATCH` pipeline passes under one hold
of the work lock and the traffic manager's lock (admin changes from other threads wait for the batch), after which
each port's output leaves in one burst (`sendmmsg`). The frames waiting on the AF_PACKET ports (mmap rings, no
system call per frame) run in batches straight from the rings' copies, after what the queues and the input
buffer hold, and a packet the queues would hand out next and at once skips them (`TrafficManager.
holding_enqueue`): its egress runs right after the pass that made it (`burst.run_frames`, the per-frame
loop). When there is nothing to do the worker sleeps in `select` on the port sockets and a wake-up pipe (for
in-process injection, packet-out and admin changes), at most until the next rate-limited departure. BMv2 runs
ingress and egress on separate threads; with Python's GIL one worker avoids a thread hand-off per packet and keeps the same
queueing semantics (rates, depths, priorities, pauses). gRPC threads call `install_pipeline`, `inject_packet_out` and the admin operations at any time:
a pipeline swap is one reference assignment (each packet keeps the pipeline it started with, and packets of a
replaced pipeline still queued are dropped), state changes go through the runtime state's own lock.
"""

from __future__ import annotations

import itertools
import logging
import operator
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from itertools import islice
from typing import Any

from p4.config.v1 import p4info_pb2

from p4switch.exceptions import P4SwitchError
from p4switch.runtime.context import DROP_PORT
from p4switch.switch.burst import run_frames
from p4switch.switch.impaired_links import ImpairedLinks
from p4switch.switch.impairments import DIRECTIONS, Impairment, ImpairmentConfig, ImpairmentError
from p4switch.switch.pfc import MAC_CONTROL_ETHERTYPE, parse_pfc, pause_seconds
from p4switch.switch.pipeline import Pipeline, build_pipeline
from p4switch.switch.ports import AfPacketPort, PortCapture
from p4switch.switch.tm import DEFAULT_QUEUE_DEPTH, TrafficManager
from p4switch.switch.v1model import IngressPacket, QueuedPacket, V1Model, log_packet_error

log = logging.getLogger("p4switch.switch")

INPUT_CAPACITY = 1024  # BMv2's input buffer capacity, per class (normal, resubmit/recirculate)
# pipeline passes per hold of the work lock; ports' queued output is flushed after each batch. A port's burst from
# its ring runs as one batch (up to half this many frames: ingress and egress each): each batch has a fixed cost
# (locks, the ring's and the port's calls, one `sendmmsg`), and 128-frame bursts cost less per packet than 64
WORK_BATCH = 256
_PFC_TYPE = MAC_CONTROL_ETHERTYPE.to_bytes(2, "big")
_ETHERTYPE = operator.itemgetter(slice(12, 14))  # a frame's outer EtherType, as a C-level call for `map`

OutputCallback = Callable[[int, bytes], None]
_NO_PORT_QUEUES: dict[int, Callable[[bytes], None]] = {}
_NO_QUEUE = _NO_PORT_QUEUES.get  # no port's burst queue: `burst.run_frames` calls `engine.transmit`


def _us_since(start_ns: int) -> Callable[[], int]:
    """A clock of microseconds since `start_ns` (monotonic): a plain function with its names bound, read twice
    per packet (ingress and egress timestamps), so no method binding or global lookup per reading."""

    def now_us(_ns: Callable[[], int] = time.monotonic_ns, _start: int = start_ns) -> int:
        return (_ns() - _start) // 1000

    return now_us


class Switch:
    """A v1model switch. Create, `install_pipeline`, `add_interface`/`inject`, `start()`, ..., `stop()`."""

    def __init__(
        self,
        *,
        device_id: int = 0,
        cpu_port: int | None = None,
        priority_queues: int = 1,
        queue_depth: int = DEFAULT_QUEUE_DEPTH,
        seed: int | None = None,
        honor_pfc: bool = True,
        link_bps: float = 10e9,
        port_io: str = "auto",
    ) -> None:
        if cpu_port is not None and not 0 <= cpu_port < 512:
            raise P4SwitchError(f"CPU port {cpu_port} out of range 0..511")
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.seed = seed
        self.honor_pfc = honor_pfc
        self.link_bps = link_bps
        self.port_io = port_io  # AF_PACKET port I/O: "auto" (ring, else per packet), "ring" or "socket"
        self.packet_in_sink: Callable[[bytes], None] | None = None
        self._start_ns = time.monotonic_ns()
        self._clock_us = _us_since(self._start_ns)  # what the engine and the pipeline's externs read
        self._pipeline: Pipeline | None = None
        self._install_lock = threading.Lock()
        self.tm = TrafficManager(
            priority_queues=priority_queues, default_depth=queue_depth, clock=time.monotonic,
            clock_ns=time.monotonic_ns, epoch_ns=self._start_ns, on_change=self._kick, refused_port=DROP_PORT,
        )
        self.engine = V1Model(
            enqueue=self._tm_enqueue,
            reinject=self._reinject,
            transmit=self._transmit,
            clock_us=self._clock_us,
            priority_queues=priority_queues,
        )
        self._in_lock = threading.Lock()  # guards the two input deques
        self._work_lock = threading.RLock()  # one packet in the pipeline at a time, whichever thread runs it
        self._input_hi: deque[IngressPacket] = deque()
        self._input_lo: deque[IngressPacket] = deque()
        self._packet_ids = itertools.count()
        self._inflight = 0
        self._inflight_lock = threading.Lock()
        self._idle = threading.Condition(self._inflight_lock)  # notified when nothing is in flight any more
        self._idle_waiters = 0
        self._outputs: tuple[OutputCallback, ...] = ()  # replaced, never mutated: iterated lock-free per packet
        self._ports: dict[int, AfPacketPort] = {}
        self._port_list: tuple[AfPacketPort, ...] = ()
        self._worker_ident: int | None = None
        # the worker is in a batch (it holds the work lock, so it alone runs the pipeline): its port output is queued
        # and sent in bursts, and the pipeline's in-flight change is applied once at the end
        self._in_batch = False
        self._debug = False  # log.isEnabledFor(DEBUG), read once per batch rather than per packet
        self._port_queues: dict[int, Callable[[bytes], None]] = {}  # port -> its burst queue, for `_transmit`
        # frames a batch sends after its passes, outside the traffic manager's lock (`_run_batch`)
        self._deferred: list[tuple[int, bytes]] = []
        # see `_tx_for_batch` (until a port is attached, everything is sent at the batch's end)
        self._batch_transmit: Callable[[int, bytes], None] = self._transmit_later
        self._batch_queues: Callable[[int], Callable[[bytes], None] | None] = _NO_QUEUE  # its port -> queue
        # the packet a batch pass made that the queues would hand out next, run by the batch itself
        self._held: list[tuple[int, QueuedPacket, Any, float]] = []
        self._hold_enqueue = self.tm.holding_enqueue(self._held)
        self._capture: PortCapture | None = None
        self.links = ImpairedLinks(self._deliver, self._busy)
        self._threads: list[threading.Thread] = []
        self._sleeping = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._running = False
        self._stopped = False
        self.dropped_no_pipeline = 0
        self.dropped_stale = 0
        self.dropped_input_full = 0
        self.pfc_frames_received = 0

    # ------------------------------------------------------------------------------------------ pipeline

    def install_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> None:
        """Build the new pipeline completely, then swap it in. Raises `DeviceConfigError`; on error the old
        pipeline keeps running untouched."""
        pipeline = build_pipeline(p4info, device_config, seed=self.seed, clock_us=self._clock_us)
        with self._install_lock:
            self._pipeline = pipeline
        log.info("pipeline %s installed on device %d", pipeline.name or "(unnamed)", self.device_id)

    @property
    def pipeline(self) -> Pipeline | None:
        return self._pipeline

    @property
    def state(self) -> Any:
        pipeline = self._pipeline
        return pipeline.state if pipeline is not None else None

    def now_us(self) -> int:
        """Microseconds since the switch was created (BMv2's timestamp base)."""
        return self._clock_us()

    # ---------------------------------------------------------------------------------------------- ports

    def add_interface(self, port: int, ifname: str) -> None:
        """Attach a Linux interface as `port` (AF_PACKET). Raises `SwitchStartError` for a missing one."""
        if port in self._ports:
            raise P4SwitchError(f"port {port} is already attached to {self._ports[port].ifname}")
        if port == self.cpu_port:
            raise P4SwitchError(f"port {port} is the CPU port")
        p = AfPacketPort(port, ifname, self.port_io)
        log.info("port %d on %s: %s", port, ifname, p.describe())
        self._ports[port] = p
        self._port_list = tuple(self._ports.values())
        self._port_queues = {n: q.queue for n, q in self._ports.items()}
        self._batch_transmit, self._batch_queues = self._tx_for_batch(self._port_queues)
        self._wake()

    def port_io_summary(self) -> str:
        """How the attached interfaces move packets, for the start-up line."""
        kinds = sorted({p.describe() for p in self._port_list})
        return "; ".join(kinds) if kinds else "no interfaces"

    def enable_capture(self, directory: str, names: dict[int, str] | None = None) -> None:
        """`--pcap DIR`: capture every port's traffic (names default to the interface names)."""
        if names is None:
            names = {port: p.ifname for port, p in self._ports.items()}
        self._capture = PortCapture(directory, names)

    def add_output_callback(self, fn: OutputCallback) -> None:
        """`fn(port, frame)` for every frame leaving any port, the CPU port included."""
        self._outputs = (*self._outputs, fn)

    def remove_output_callback(self, fn: OutputCallback) -> None:
        outputs = list(self._outputs)
        outputs.remove(fn)
        self._outputs = tuple(outputs)

    def inject(self, port: int, frame: bytes) -> None:
        """A frame arrives on `port` (in-process port API; also what AF_PACKET ports call)."""
        self._port_receive(port, frame)

    def process(self, port: int, frame: bytes, timeout: float = 10.0) -> bool:
        """Inject a frame and run it, and everything it causes, to completion in the calling thread (the worker
        is not woken): the cheapest way for in-process tests to push one frame at a time. False on timeout
        (a rate-limited queue or a delay line still holds a packet)."""
        self._port_receive(port, frame, wake=False)
        return self.wait_idle(timeout)

    def inject_packet_out(self, frame: bytes) -> None:
        """A P4Runtime packet-out (the packet_out header already prepended) enters ingress on the CPU port."""
        if self.cpu_port is None:
            log.warning("packet-out dropped: the switch has no CPU port (--cpu-port)")
            return
        self._push_input(IngressPacket(self.cpu_port, frame, next(self._packet_ids)))

    def _port_receive(self, port: int, frame: bytes, wake: bool = True) -> None:
        capture = self._capture
        if capture is not None:
            capture.incoming(port, frame)
        if self.honor_pfc:
            pauses = parse_pfc(frame)
            if pauses is not None:
                self._honor_pfc(port, pauses)
        imp = self.links.table.get((port, "in"))
        if imp is None:
            self._push_input(IngressPacket(port, frame, next(self._packet_ids)), wake=wake)
        elif imp.instant:
            for f in self.links.decide(imp, frame):
                self._push_input(IngressPacket(port, f, next(self._packet_ids)), wake=wake)
        else:
            self.links.submit(imp, port, "in", frame)

    def _honor_pfc(self, port: int, pauses: dict[int, int]) -> None:
        self.pfc_frames_received += 1
        for prio, quanta in pauses.items():
            if prio < self.tm.priority_queues:
                self.pause_queue(port, prio, pause_seconds(quanta, self.link_bps))

    # ------------------------------------------------------------------------------------------ admin ops

    def set_queue_rate(self, port: int, pps: float, priority: int | None = None) -> None:
        self.tm.set_queue_rate(port, pps, priority)

    def set_queue_depth(self, port: int, depth: int, priority: int | None = None) -> None:
        self.tm.set_queue_depth(port, depth, priority)

    def pause_queue(self, port: int, priority: int, seconds: float) -> None:
        """Hold an egress queue (0 resumes), as a received PFC frame does."""
        self.tm.pause(port, priority, seconds)

    def set_impairment(
        self,
        port: int,
        direction: str = "both",
        *,
        loss: float = 0.0,
        dup: float = 0.0,
        reorder: float = 0.0,
        delay_ms: float = 0.0,
        jitter_ms: float = 0.0,
        seed: int = 0,
        corrupt: float = 0.0,
    ) -> None:
        """Impair frames of `port` in `direction` ("in", "out" or "both"); all zero removes the impairment."""
        if direction not in (*DIRECTIONS, "both"):
            raise ImpairmentError(f"direction must be 'in', 'out' or 'both', not {direction!r}")
        dirs = DIRECTIONS if direction == "both" else (direction,)
        for i, d in enumerate(dirs):
            config = ImpairmentConfig(loss, dup, reorder, delay_ms, jitter_ms, seed=seed + i, corrupt=corrupt)
            config.validate()
            self.links.configure(port, d, config)
        # an instant egress impairment joins the batch's transmit
        self._batch_transmit, self._batch_queues = self._tx_for_batch(self._port_queues)

    def impairment_stats(self) -> dict[str, dict[str, int]]:
        return self.links.stats()

    def stats(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self.engine.counters)
        out.update(
            dropped_no_pipeline=self.dropped_no_pipeline,
            dropped_stale_pipeline=self.dropped_stale,
            dropped_input_full=self.dropped_input_full,
            pfc_frames_received=self.pfc_frames_received,
            queues=[asdict(q) for q in self.tm.stats()],
            ports={
                port: {"interface": p.ifname, "io": p.io, "rx": p.rx_frames, "tx": p.tx_frames,
                       "tx_errors": p.tx_errors, **p.ring_stats()}
                for port, p in sorted(self._ports.items())
            },
            impairments=self.impairment_stats(),
        )
        return out

    # ---------------------------------------------------------------------------------------- life cycle

    def start(self) -> None:
        if self._running or self._stopped:
            return
        self._running = True
        t = threading.Thread(target=self._worker_loop, name=f"switch{self.device_id}-pipeline", daemon=True)
        t.start()
        self._threads.append(t)
        self.links.start(f"switch{self.device_id}-links")

    def stop(self) -> None:
        """Stop threads and close ports and captures. Idempotent; the switch cannot be restarted."""
        if self._stopped:
            return
        self._stopped = True
        self._running = False
        self.tm.close()
        self._wake()
        self.links.stop()
        for t in self._threads:
            t.join(timeout=5.0)
        for p in self._ports.values():
            p.close()
        wake_r, wake_w = self._wake_r, self._wake_w
        self._wake_r = self._wake_w = -1
        os.close(wake_r)
        os.close(wake_w)
        if self._capture is not None:
            self._capture.close()
        with self._idle:
            self._idle.notify_all()  # release waiters

    def __enter__(self) -> Switch:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until no packet is queued, in a pipeline or in a delay line; False if `timeout` ran out.

        The caller does pipeline work itself while it waits (under the same lock as the worker, so packets are
        still processed one at a time and in order): in-process users that inject a frame and wait do not pay two
        thread hand-offs per frame."""
        deadline = time.monotonic() + timeout
        try:
            while self._inflight > 0:
                wake: float | None = None
                if self._running:
                    did, wake = self._run_one()
                    if did:
                        continue
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopped:
                    return self._inflight == 0
                # poll: frames may come back from a delay line or a rate-limited queue meanwhile
                with self._idle:
                    if self._inflight > 0:
                        self._idle_waiters += 1
                        try:
                            self._idle.wait(min(remaining, wake if wake is not None else 0.005, 0.005))
                        finally:
                            self._idle_waiters -= 1
            return True
        finally:
            if self._inflight > 0:
                self._kick()  # work is left (a timeout): the worker must not sleep on an old wake-up time

    def _busy(self, n: int) -> None:
        """Count packets in flight (input, pipeline, queues, delay line). A plain lock keeps this cheap per packet;
        waiters are notified only when someone waits and the count reaches zero."""
        with self._inflight_lock:
            after = self._inflight + n
            if after <= 0:
                self._inflight = 0
                if self._idle_waiters:
                    self._idle.notify_all()
            else:
                self._inflight = after

    # ------------------------------------------------------------------------------------------- workers

    def _push_input(self, pkt: IngressPacket, high: bool = False, wake: bool = True) -> None:
        with self._in_lock:
            queue = self._input_hi if high else self._input_lo
            if len(queue) >= INPUT_CAPACITY or self._stopped:
                self.dropped_input_full += 1
                return
            self._busy(1)
            queue.append(pkt)
        if wake:
            self._wake()

    def _reinject(self, pkt: IngressPacket) -> None:
        self._push_input(pkt, high=True)

    def _kick(self) -> None:
        """Wake the worker: a queue's rate, depth or pause changed, so a packet may now leave earlier."""
        self._wake()

    def _wake(self) -> None:
        if self._sleeping and self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"\0")
            except (BlockingIOError, OSError):
                pass  # the pipe is full (the worker will wake anyway) or closed (stopping)

    def _run_one(self) -> tuple[bool, float | None]:
        """One unit of pipeline work, if there is any (a batch of one, in the calling thread): a packet allowed
        to leave goes through egress, else the next input through ingress. Returns (did work, seconds until a
        queued packet may leave or None)."""
        done, wake = self._run_batch(1)
        return done > 0, wake

    def _run_batch(self, budget: int, port: int = 0, frames: list[bytes] | None = None) -> tuple[int, float | None]:
        """Up to `budget` units of pipeline work under one hold of the work lock and the traffic manager's lock:
        a packet allowed to leave goes through egress first, else the next input (resubmitted/recirculated before
        new, the input buffer before `frames`, which the worker took from `port`'s ring) through ingress; no
        per-packet lock or in-flight update (the batch's net change is applied once at the end). The engine's
        enqueue is the traffic manager's `holding_enqueue`: a packet the queues would hand out next and at once
        (they are empty, its queue is unshaped and not paused) skips them, and its egress runs right after the
        pass that made it, with the depth and time the queues would have given (what the next loop turn would have
        done); anything else is queued. Its transmit queues each frame for its port's burst (`_tx_for_batch`)
        unless something needs the frame on the way (capture, output callbacks, impairments, debug log:
        `_transmit`); those are read at the batch's start, so a callback or impairment added meanwhile applies
        from the next batch. Each port's burst leaves at the end; frames the budget left over join the input
        buffer. The worker runs batches of `WORK_BATCH`; `wait_idle` runs batches of one in its own thread.
        Returns (units done, seconds until a queued packet may leave or None)."""
        done = ingressed = taken = 0
        wake: float | None = None
        tm, hi, lo, engine, held = self.tm, self._input_hi, self._input_lo, self.engine, self._held
        poll, ingress, egress = tm.poll_locked, engine.ingress, engine.egress
        n_rx = len(frames) if frames else 0
        next_id = self._packet_ids.__next__
        with self._work_lock:
            self._debug = debug = log.isEnabledFor(logging.DEBUG)
            self._in_batch = True
            size = len(tm)
            engine.enqueue = self._hold_enqueue
            # frames that leave through callbacks, captures, delay lines or the CPU port are sent after the passes,
            # outside the traffic manager's lock: a callback may reach another switch's locks (an emulated link
            # injecting a PFC frame that pauses a queue), and that switch's worker may be doing the same to us
            if not (debug or self._capture is not None or self._outputs or self.links.delayed):
                engine.transmit = self._batch_transmit
                queues = self._batch_queues
            else:
                engine.transmit = self._transmit_later
                queues = _NO_QUEUE
            try:
                with tm.lock:  # admin operations (rates, depths, pauses) wait for the batch's end
                    while done < budget:
                        if tm._size:  # len(tm) without a method call
                            got, wake = poll()
                            if got is not None:
                                done += 1
                                out_port, _prio, item, depth = got
                                if item.pipeline is not self._pipeline:
                                    self.dropped_stale += 1  # queued before a pipeline swap
                                    continue
                                try:
                                    egress(item, out_port, depth)
                                except Exception as exc:
                                    self._packet_failed("egress", out_port, exc)
                                if not held:
                                    continue
                        else:
                            wake = None
                        if held:  # an egress clone the queues would hand out next: it runs below
                            pass
                        # no lock: only the work lock's holder pops, and producers (appending under `_in_lock`)
                        # only see their capacity check made conservative by a concurrent pop
                        elif hi or lo:
                            pkt = hi.popleft() if hi else lo.popleft()
                            done += 1
                            ingressed += 1
                            pipeline = self._pipeline
                            if pipeline is None:
                                self.dropped_no_pipeline += 1
                                continue
                            if debug:
                                log.debug("packet %d: ingress on port %d, %d bytes", pkt.packet_id, pkt.port,
                                          len(pkt.data))
                            try:
                                ingress(pipeline, pkt)
                            except Exception as exc:
                                self._packet_failed("ingress", pkt.port, exc)
                        elif taken < n_rx:
                            pipeline = self._pipeline
                            if pipeline is None:
                                self.dropped_no_pipeline += 1
                                taken += 1
                                done += 1
                                continue
                            # the common case in a tight loop: frames back to back, each packet the queues would
                            # hand out next running its egress at once, until the budget (two passes a frame) ends
                            # or something is queued or reinjected (the outer loop serves that first). The frames
                            # all came before this loop, so they run on the pipeline installed when it began
                            stop = min(n_rx, taken + max((budget - done) // 2, 1))
                            n, passes = run_frames(
                                engine, pipeline, port, islice(frames, taken, stop),  # type: ignore[arg-type]
                                next_id=next_id, held=held, queues=queues, tm=tm, hi=hi,
                                failed=self._packet_failed, debug=debug,
                                clock_ns=time.monotonic_ns, epoch_ns=self._start_ns)  # `_clock_us`'s terms
                            taken += n
                            done += passes
                            continue
                        else:
                            break
                        while held:  # the packet the pass made, the queues' next: its egress now
                            out_port, item, _q, _t = held.pop()
                            done += 1
                            if item.pipeline is not self._pipeline:
                                self.dropped_stale += 1
                                continue
                            try:
                                egress(item, out_port, 0)
                            except Exception as exc:
                                self._packet_failed("egress", out_port, exc)
                    if held:  # not reached: every pass's held packet runs above; never lose one
                        tm.put_held(held.pop())
            finally:
                engine.enqueue, engine.transmit = self._tm_enqueue, self._transmit
                try:
                    deferred = self._deferred
                    while deferred:  # (a callback may run a batch of its own: it sends what is there by then)
                        frames_out = deferred[:]
                        deferred.clear()
                        for out_port, frame in frames_out:
                            self._transmit(out_port, frame)
                finally:
                    self._in_batch = False
                try:
                    for p in self._port_list:
                        p.flush()
                finally:
                    # applied last: until then the count is never below the truth (the batch's packets still
                    # count). Each ingress pass from the input buffer ended an input's stay, every other change is
                    # the queues' (only this thread enqueues or dequeues while it holds the work lock)
                    delta = len(tm) - size - ingressed
                    if delta:
                        self._busy(delta)
                    if taken < n_rx:
                        self._receive_many(port, frames[taken:], decided=True)  # type: ignore[index]
        return done, wake

    def _packet_failed(self, stage: str, port: int, exc: Exception) -> None:
        """A packet the pipeline raised on is dropped and counted, with one log line (not a crash)."""
        self.engine.counters.errors += 1
        log_packet_error(stage, port, exc)

    def _tx_for_batch(self, queues: dict[int, Callable[[bytes], None]]
                      ) -> tuple[Callable[[int, bytes], None], Callable[[int], Callable[[bytes], None] | None]]:
        """The engine's transmit inside a batch with nothing on the way: a frame for a port with a burst queue
        joins that port's burst (what an instant egress impairment lets through: `_impaired_queue`); any other
        (the CPU port, an unattached port) takes `_transmit`'s full path. One Python call per transmitted frame.
        Also the lookup it makes (port -> burst queue or None), for `burst.run_frames`, which calls the queue
        itself."""
        table = self.links.table
        queues = {n: self._impaired_queue(imp, q) if (imp := table.get((n, "out"))) is not None else q
                  for n, q in queues.items()}
        get, fallback = queues.get, self._deferred.append

        def transmit(port: int, frame: bytes) -> None:
            queue = get(port)
            if queue is None:
                fallback((port, frame))  # sent at the batch's end (`_run_batch`)
            else:
                queue(frame)

        return transmit, get

    def _transmit_later(self, port: int, frame: bytes) -> None:
        """The engine's transmit in a batch that is not on the fast path: `_transmit` at the batch's end."""
        self._deferred.append((port, frame))

    def _impaired_queue(self, imp: Impairment, queue: Callable[[bytes], None]) -> Callable[[bytes], None]:
        """A port's burst queue behind its instant egress impairment (a delaying one never reaches a batch)."""
        decide = self.links.decide

        def impaired(frame: bytes) -> None:
            for f in decide(imp, frame):
                queue(f)

        return impaired

    def _read_ports(self) -> list[tuple[int, list[bytes]]]:
        """Take the frames waiting on the ports, as far as the input buffer has room (what is not taken stays in
        the kernel's ring, which drops when full, like a NIC's); ports share the room evenly. Returns the bursts
        a batch may run straight from the ring's copies, `(port, frames)`, after an instant ingress impairment
        decided which of them arrive; a burst that needs per-frame handling (capture, a delaying ingress impairment,
        a PFC frame) goes into the input buffer instead (`_receive_many`)."""
        ports = self._port_list
        room = INPUT_CAPACITY - len(self._input_lo)
        if room <= 0 or not ports:
            return []
        # each port's burst runs as a batch of its own, whose budget holds it (a frame is usually two passes:
        # ingress and its held egress)
        share = max(min(room // len(ports), WORK_BATCH // 2), 1)
        bursts: list[tuple[int, list[bytes]]] = []
        table = self.links.table
        for p in ports:
            if not p.ready():  # an idle port costs one load of its ring's next status word, not a walk
                continue
            frames = p.recv_batch(share)
            if frames:
                port = p.port
                imp = table.get((port, "in"))
                if self._capture is not None or (imp is not None and not imp.instant) or (
                    self.honor_pfc and _PFC_TYPE in map(_ETHERTYPE, frames)
                ):
                    self._receive_many(port, frames)
                else:
                    if imp is not None:
                        frames = self.links.decide_many(imp, frames)
                    if frames:
                        bursts.append((port, frames))
        return bursts

    def _receive_many(self, port: int, frames: list[bytes], *, decided: bool = False) -> None:
        """`_port_receive` for a burst from one port: one lock and one in-flight update for the whole burst unless
        a capture, a delaying ingress impairment or a PFC frame needs per-frame handling. `decided`: frames a batch
        left over, which already passed those checks and the port's ingress impairment."""
        imp = None if decided else self.links.table.get((port, "in"))
        if not decided and (self._capture is not None or (imp is not None and not imp.instant) or (
            self.honor_pfc and _PFC_TYPE in map(_ETHERTYPE, frames)
        )):
            for frame in frames:
                self._port_receive(port, frame, wake=False)
            return
        if imp is not None:
            frames = self.links.decide_many(imp, frames)
        # `map` stops at the last frame before drawing another id
        pkts = list(map(IngressPacket, itertools.repeat(port), frames, self._packet_ids))
        with self._in_lock:
            if self._stopped:
                self.dropped_input_full += len(pkts)
                return
            room = INPUT_CAPACITY - len(self._input_lo)
            if room < len(pkts):
                self.dropped_input_full += len(pkts) - max(room, 0)
                pkts = pkts[:max(room, 0)]
            self._busy(len(pkts))
            self._input_lo.extend(pkts)

    def _worker_loop(self) -> None:
        self._worker_ident = threading.get_ident()
        while self._running:
            self._work_once()

    def _work_once(self) -> None:
        """One turn of the worker: the frames waiting on the ports run in batches straight from the rings' copies
        (each batch serving the traffic manager and the input buffer first), else one batch of queued work; with
        nothing to do, sleep in `select` until a port or the wake-up pipe is readable or the next rate-limited
        departure."""
        ports = self._port_list
        if ports and len(self._input_lo) < WORK_BATCH and self._run_ports():
            return
        # with nothing in flight the batch is skipped (its locks, engine swaps and port flushes cost several
        # microseconds a wake-up, a large part of the fixed cost when traffic is light). `_inflight` counts every
        # queued and input packet, and those a batch of another thread (`wait_idle`) is running, so a lock-free 0
        # means there is nothing for a batch; input pushed after the read is seen before the worker sleeps
        if self._inflight or self.tm._size or self._input_hi or self._input_lo:
            done, wake = self._run_batch(WORK_BATCH)
        else:
            done, wake = 0, None
        if done or (ports and self._run_ports()):
            return  # (a frame may have come during the batch: looked at again before sleeping)
        self._sleeping = True
        try:
            with self._in_lock:
                if self._input_hi or self._input_lo or not self._running:
                    return
            fds = [p.fileno() for p in ports]
            readable, _, _ = select.select([*fds, self._wake_r], [], [], wake)
            if self._wake_r in readable:
                try:
                    os.read(self._wake_r, 4096)
                except BlockingIOError:
                    pass
        finally:
            self._sleeping = False

    def _run_ports(self) -> bool:
        """Run what waits on the ports, a batch per port's burst; whether anything was there."""
        bursts = self._read_ports()
        for port, frames in bursts:
            self._run_batch(WORK_BATCH, port, frames)
        return bool(bursts)

    def _tm_enqueue(self, port: int, priority: int, item: QueuedPacket) -> bool:
        """The engine's enqueue outside a batch (a batch uses the traffic manager's lock-held one directly and
        counts its in-flight change from the queues' size). The drop port has no queue: the manager refuses it."""
        if self.tm.enqueue(port, priority, item):
            # no wake-up needed: only the worker and wait_idle() run the pipeline, and wait_idle() kicks the
            # worker if it leaves queued work behind. Counted after the fact: the packet being ingressed still
            # counts until its own decrement, so the count never dips to zero in between
            self._busy(1)
            return True
        return False

    def _transmit(self, port: int, frame: bytes) -> None:
        """The engine's transmit outside a batch's fast path (`_tx_for_batch`): an egress impairment, else out."""
        imp = self.links.table.get((port, "out"))
        if imp is None:
            self._emit(port, frame)
        elif imp.instant:
            for f in self.links.decide(imp, frame):
                self._emit(port, f)
        else:
            self.links.submit(imp, port, "out", frame)

    def _emit(self, port: int, frame: bytes) -> None:
        if log.isEnabledFor(logging.DEBUG):  # also the delay-line thread's path: not the batch's cached flag
            log.debug("transmit on port %d, %d bytes", port, len(frame))
        capture = self._capture
        if capture is not None:
            capture.outgoing(port, frame)
        if port == self.cpu_port:
            sink = self.packet_in_sink
            if sink is not None:
                try:
                    sink(frame)
                except Exception:
                    log.exception("packet-in sink failed")
        else:
            p = self._ports.get(port)
            if p is not None:
                if self._in_batch and threading.get_ident() == self._worker_ident:
                    p.queue(frame)  # leaves with the rest of the worker's batch
                else:
                    p.send(frame)
        for fn in self._outputs:
            try:
                fn(port, frame)
            except Exception:
                log.exception("output callback failed")

    # ---------------------------------------------------------------------------------------- impairments

    def _deliver(self, port: int, direction: str, frame: bytes) -> None:
        if direction == "out":
            self._emit(port, frame)
        else:
            self._push_input(IngressPacket(port, frame, next(self._packet_ids)))
