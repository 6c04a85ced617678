"""File mode (`simple_switch --use-files 0 -i 0@p0 ...`): read `<name>_in.pcap` per port, write `<name>_out.pcap`.

Deterministic by construction, with no threads and no sleeps. Input frames of all ports are merged by pcap
timestamp (ties: lower port first, then file order). BMv2 has the whole file in its input buffer at once and its
ingress thread runs ahead of the egress threads, so we model the same two stages: up to `INPUT_BUFFER` (1024,
BMv2's input buffer) frames go through ingress first, each followed at once by its resubmissions (BMv2 serves
them before new packets); then the traffic manager is drained, FIFO per port, and recirculated packets re-enter
ingress as they come back. The conformance corpus shows this order: a recirculated packet leaves after the
packets that followed it into the switch. BMv2 reads several input ports concurrently, so with input on several
ports its interleaving is timing-dependent; ours is the merged order above.

The traffic manager is unbounded here: file mode never drops or delays a packet for queue reasons. Impairments
configured on ports apply (loss, duplication and reordering; delays only order frames, they take no time).
"""

from __future__ import annotations

import functools
import logging
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from p4switch.switch.impairments import Impairment, ImpairmentConfig
from p4switch.switch.pipeline import Pipeline
from p4switch.switch.ports import PcapWriter, read_pcap
from p4switch.switch.tm import FileModeQueues
from p4switch.switch.v1model import IngressPacket, QueuedPacket, V1Model, log_packet_error

log = logging.getLogger("p4switch.switch")

INPUT_BUFFER = 1024


class TickClock:
    """File mode's clock: 1 us per pipeline pass, so timestamps (and meters) are the same on every run. Share
    one with `build_pipeline(clock_us=...)` so the program's externs see the same time."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now

    def tick(self) -> None:
        self.now += 1


@dataclass
class FileRunResult:
    """What a file-mode run did: packets read and written per port and the engine's counters."""

    packets_in: dict[int, int] = field(default_factory=dict)
    packets_out: dict[int, int] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)


class FileModeRunner:
    """Runs a pipeline over pcap files. `ports` maps port numbers to file stems (`0 -> "p0"`)."""

    def __init__(
        self,
        pipeline: Pipeline,
        ports: dict[int, str],
        *,
        directory: str | Path = ".",
        priority_queues: int = 1,
        cpu_port: int | None = None,
        impairments: dict[tuple[int, str], ImpairmentConfig] | None = None,
        clock: TickClock | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.ports = dict(ports)
        self.directory = Path(directory)
        self.cpu_port = cpu_port
        self.clock = clock or TickClock()
        now = functools.partial(getattr, self.clock, "now")  # a C-level call: the clock is read 3x per packet
        self.tm = FileModeQueues(priority_queues=priority_queues, clock_us=now)
        self._reinjected: deque[IngressPacket] = deque()
        self._outputs: dict[int, list[bytes]] = {p: [] for p in self.ports}
        self._impair = {key: Impairment(cfg) for key, cfg in (impairments or {}).items() if cfg.active}
        self.cpu_frames: list[bytes] = []
        # `process()` of one frame holds its ingress's first packet here instead of queueing it (`_enqueue`)
        self._holding = False
        self._held: tuple[int, int, QueuedPacket] | None = None
        # the (port, priority) queues the queues have made: the queues take equal priorities oldest queue first,
        # so a packet is held only for a queue that exists, whose place in that order is then already the same
        self._made: set[tuple[int, int]] = set()
        # whether anything went into the queues since `_drain` last found them empty: `len(self.tm)` without its
        # call (every entry point drains before it returns, so the queues are empty when one starts)
        self._queued = False
        self.engine = V1Model(
            enqueue=self._enqueue,
            reinject=self._reinjected.append,
            transmit=self._transmit,
            clock_us=now,
            priority_queues=priority_queues,
        )

    def _enqueue(self, port: int, priority: int, item: QueuedPacket) -> bool:
        """The engine's enqueue. While `process()` runs one frame's ingress with the queues empty, the first packet
        is held, not queued: as the queues would, it gets depth 0 and this pass's time, and it is the next packet
        they would give out, so `process()` sends it to egress itself, without the queues' enqueue and dequeue
        (the common case: one unicast packet per frame). A second packet puts the held one into the queues first,
        in order, and so does a resubmission (which runs before anything queued). The first packet for a queue is
        always queued, so the queues are made in the same order as without holding."""
        if self._holding:
            if self._held is None and not self._queued and (port, priority) in self._made:
                item.enq_qdepth = 0
                item.enq_timestamp = self.clock.now
                self._held = (port, priority, item)
                return True
            self._release()
        self._made.add((port, priority))
        self._queued = True
        return self.tm.enqueue(port, priority, item)

    def _release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            self._queued = True
            self.tm.enqueue(*held)  # same depth (its queue is empty) and time (the clock moves between passes)

    def _transmit(self, port: int, frame: bytes) -> None:
        imp = self._impair.get((port, "out")) if self._impair else None
        if imp is None and port != self.cpu_port:  # the per-packet case: no list, no loop
            out = self._outputs.get(port)
            if out is not None:
                out.append(frame)
            return
        frames = [frame] if imp is None else [f for _, f in imp.process(frame, 0.0)]
        for f in frames:
            if port == self.cpu_port:
                self.cpu_frames.append(f)
            out = self._outputs.get(port)
            if out is not None:
                out.append(f)
            # frames for ports that were not attached leave nowhere, as in BMv2

    def read_inputs(self) -> list[tuple[float, int, int, bytes]]:
        """Every input frame as `(timestamp, port, index, frame)` in processing order."""
        merged: list[tuple[float, int, int, bytes]] = []
        for port, stem in sorted(self.ports.items()):
            path = self.directory / f"{stem}_in.pcap"
            if not path.exists():
                continue  # a port without input only produces output
            for i, (ts, frame) in enumerate(read_pcap(path)):
                merged.append((ts, port, i, frame))
        merged.sort(key=lambda x: (x[0], x[1], x[2]))
        return merged

    def process(self, port: int, frame: bytes, packet_id: int) -> None:
        """One input frame to completion (with everything it spawns): `process_batch` of one frame, without the
        batch's list and loop when no input impairment applies."""
        if self._impair:
            self.process_batch([(port, frame, packet_id)])
            return
        # `_run` (= `_safe_ingress` then `_drain`, which runs the resubmissions first) without its two frames
        clock = self.clock
        clock.now += 1
        self._holding = True
        try:
            self.engine.ingress_frame(self.pipeline, port, frame, packet_id)
        except Exception as exc:
            self.engine.counters.errors += 1
            log_packet_error("ingress", port, exc)
        finally:
            self._holding = False
        held = self._held
        if held is not None:
            if self._reinjected:
                self._release()  # a resubmission runs first: the held packet waits in the queues
            else:
                # what `_drain` would dequeue first: the queues hold nothing else and nothing is reinjected
                self._held = None
                clock.now += 1
                try:
                    self.engine.egress(held[2], held[0], 0)
                except Exception as exc:
                    self.engine.counters.errors += 1
                    log_packet_error("egress", held[0], exc)
        if self._reinjected or self._queued:  # else `_drain` would find nothing
            self._drain()

    def process_batch(self, frames: list[tuple[int, bytes, int]]) -> None:
        """Frames `(port, frame, packet_id)` through ingress in order (each with its resubmissions), then drain
        the queues and recirculations: BMv2's ingress running ahead of its egress."""
        impair = self._impair
        clock = self.clock
        ingress = self.engine.ingress_frame
        pipeline = self.pipeline
        reinjected = self._reinjected
        for port, frame, packet_id in frames:
            if impair and (port, "in") in impair:
                for _, f in impair[(port, "in")].process(frame, 0.0):
                    self._safe_ingress(IngressPacket(port, f, packet_id))
                    while reinjected:
                        self._safe_ingress(reinjected.popleft())
                continue
            clock.now += 1
            try:
                ingress(pipeline, port, frame, packet_id)
            except Exception as exc:
                self.engine.counters.errors += 1
                log_packet_error("ingress", port, exc)
            while reinjected:
                self._safe_ingress(reinjected.popleft())
        self._drain()

    def _run(self, pkt: IngressPacket) -> None:
        self._safe_ingress(pkt)
        self._drain()

    def _drain(self) -> None:
        engine = self.engine
        pending: deque[IngressPacket] = self._reinjected
        dequeue = self.tm.dequeue
        while True:
            if pending:
                self._safe_ingress(pending.popleft())
                continue
            got = dequeue()
            if got is None:
                self._queued = False
                return
            port, _prio, item, depth = got
            self.clock.now += 1
            try:
                engine.egress(item, port, depth)
            except Exception as exc:
                engine.counters.errors += 1
                log_packet_error("egress", port, exc)

    def _safe_ingress(self, pkt: IngressPacket) -> None:
        self.clock.now += 1
        try:
            self.engine.ingress(self.pipeline, pkt)
        except Exception as exc:
            self.engine.counters.errors += 1
            log_packet_error("ingress", pkt.port, exc)

    def flush_impairments(self) -> None:
        for (port, direction), imp in self._impair.items():
            for _, f in imp.expire(float("inf")):
                if direction == "out":
                    out = self._outputs.get(port)
                    if out is not None:
                        out.append(f)
                else:
                    self._run(IngressPacket(port, f))

    def run(self) -> FileRunResult:
        """Open every output file first (so each exists even if empty), process all input, writing each batch's
        output as it completes (memory stays bounded by one batch), close."""
        writers = {port: PcapWriter(self.directory / f"{stem}_out.pcap") for port, stem in self.ports.items()}
        result = FileRunResult(packets_in={p: 0 for p in self.ports}, packets_out={p: 0 for p in self.ports})

        def write_out() -> None:
            for port, frames in self._outputs.items():
                w = writers[port]
                for f in frames:
                    w.write(f, timestamp=float(result.packets_out[port]))
                    result.packets_out[port] += 1
                frames.clear()

        try:
            inputs = self.read_inputs()
            for start in range(0, len(inputs), INPUT_BUFFER):
                chunk = inputs[start : start + INPUT_BUFFER]
                batch = [(port, frame, start + i) for i, (_ts, port, _n, frame) in enumerate(chunk)]
                for port, _frame, _id in batch:
                    result.packets_in[port] += 1
                self.process_batch(batch)
                write_out()
            self.flush_impairments()
            write_out()
        finally:
            for w in writers.values():
                w.close()
        result.counters = {k: v for k, v in asdict(self.engine.counters).items() if isinstance(v, int)}
        return result

    def outputs(self) -> dict[int, list[bytes]]:
        """Frames out per port not yet written by `run()` (everything, when driven by `process*` directly)."""
        return self._outputs

    def summary(self) -> dict[str, Any]:
        return asdict(self.engine.counters)
