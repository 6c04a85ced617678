"""The live switch's loop over a burst of frames taken from one port's ring (issue 17's live/file gap).

`V1Model.ingress_frame`, the traffic manager's `holding_enqueue` and `V1Model.egress` with the work they share
folded together, for the packet that needs nothing else (its ingress makes one unicast packet, the queues would
hand it out next and at once): no `QueuedPacket`, held entry or pop, no `egress` or transmit closure call, and
when the program's egress is empty (`Program.egress_noop`) the deparsed frame goes straight onto its port's
burst. Anything else takes the engine's own steps (`_after_ingress`, `enqueue_locked`, `egress` and the
transmit callback), so every packet sees exactly what the general path gives it: the same counters, clock
readings (ingress, enqueue; egress when it has a body), queue statistics and errors.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from p4switch.runtime.context import DROP_PORT, INSTANCE_NORMAL, PacketContext
from p4switch.switch.pipeline import Pipeline
from p4switch.switch.tm import TrafficManager
from p4switch.switch.v1model import MASK_48, IngressPacket, QueuedPacket, V1Model

log = logging.getLogger("p4switch.switch")

Failed = Callable[[str, int, Exception], None]
_NO_QUEUES: dict[tuple[int, int], Any] = {}
_NO_QUEUE = _NO_QUEUES.get


def run_frames(
    engine: V1Model,
    pipeline: Pipeline,
    port: int,
    frames: Iterator[bytes],
    *,
    next_id: Callable[[], int],
    held: list[tuple[int, QueuedPacket, Any, float]],
    queues: Callable[[int], Callable[[bytes], None] | None],
    tm: TrafficManager,
    hi: deque[IngressPacket],
    failed: Failed,
    debug: bool,
    clock_ns: Callable[[], int],
    epoch_ns: int,
) -> tuple[int, int]:
    """Run `frames` (from `port`) through ingress and, for each packet the queues would hand out next, egress,
    until they end or something is queued or reinjected (the caller serves that first). `queues(port)` is the
    port's burst queue or None (then `engine.transmit`); the engine's `enqueue` and `transmit` are the batch's,
    its clock `(clock_ns() - epoch_ns) // 1000`. The caller holds the traffic manager `tm`'s lock (its queues'
    configuration and blocked dequeuers stay as they are meanwhile) and nothing is held. Returns (frames taken,
    pipeline passes)."""
    fused = pipeline.port_ingress
    program = pipeline.program
    checksum, deparse = program.compute_checksum, program.deparse
    noop = bool(getattr(program, "egress_noop", False))
    counters = engine.counters
    egress, enqueue, queues_n = engine.egress, tm.enqueue_locked, engine.priority_queues
    queue_of: Callable[[tuple[int, int]], Any]
    plan = tm.express_plan()
    if plan is None:  # nothing may skip the queues: every packet takes `enqueue_locked`
        queue_of, tm_ns, tm_epoch = _NO_QUEUE, clock_ns, epoch_ns
    else:
        queue_of, tm_ns, tm_epoch = plan
    taken = done = received = transmitted = 0
    # the last queue found (a burst's packets mostly share one): queue records are never replaced or removed
    last_out = last_priority = -1
    last_q: Any = None
    try:
        for frame in frames:
            taken += 1
            packet_id = next_id()
            if debug:
                log.debug("packet %d: ingress on port %d, %d bytes", packet_id, port, len(frame))
            enq_ts = out = -1
            try:
                if fused is None:
                    engine.ingress_frame(pipeline, port, frame, packet_id)
                else:
                    # `V1Model.ingress_frame`, step for step (its clock reading inline)
                    ctx = PacketContext(frame, packet_id)
                    length = len(frame)
                    received += 1
                    fused(ctx, port, ((clock_ns() - epoch_ns) // 1000) & MASK_48, length)
                    sm = ctx.sm
                    if ctx.clone_requests or ctx.resubmit_field_list is not None or sm.mcast_grp:
                        engine._after_ingress(pipeline, ctx, port, frame, packet_id, length)
                    elif (out := sm.egress_spec) == DROP_PORT:
                        counters.dropped_ingress += 1
                    else:
                        sm.instance_type = INSTANCE_NORMAL
                        priority = sm.priority
                        if priority >= queues_n:
                            counters.dropped_priority += 1
                            log.debug("priority %d out of range (%d queues): packet dropped", priority, queues_n)
                        else:
                            # `TrafficManager.holding_enqueue` (`express_plan`), inline: where it would hold the
                            # packet, its egress runs below; where it would not, it calls `enqueue_locked`
                            if tm._size:
                                q = None
                            elif out == last_out and priority == last_priority:
                                q = last_q
                            elif (q := queue_of((out, priority))) is not None:
                                last_out, last_priority, last_q = out, priority, q
                            if q is not None and q.express and q.paused_until <= (ns := tm_ns()) * 1e-9:
                                q.enqueued += 1
                                enq_ts = (ns - tm_epoch) // 1000
                            elif not enqueue(out, priority, QueuedPacket(ctx, pipeline, length)):
                                counters.dropped_queue_full += 1
            except Exception as exc:
                failed("ingress", port, exc)
            if enq_ts >= 0:
                done += 2
                try:
                    if noop and ctx.recirculate_field_list is None and ctx.truncate_length is None:
                        # `V1Model.egress` of a program whose egress is empty, and the batch's transmit
                        checksum(ctx)
                        data = deparse(ctx)
                        transmitted += 1
                        queue = queues(out)
                        if queue is None:
                            engine.transmit(out, data)
                        else:
                            queue(data)
                    else:
                        egress(QueuedPacket(ctx, pipeline, length, enq_ts, 0), out, 0)
                except Exception as exc:
                    failed("egress", out, exc)
            elif held:  # a packet `_after_ingress` made that the queues would hand out next: its egress now
                out_port, item, _q, _t = held.pop()
                done += 2
                try:
                    egress(item, out_port, 0)
                except Exception as exc:
                    failed("egress", out_port, exc)
            else:
                done += 1
            if tm._size or held or hi:
                break
    finally:
        counters.received += received
        counters.transmitted += transmitted
    return taken, done
