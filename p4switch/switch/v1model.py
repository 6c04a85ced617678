"""BMv2 `simple_switch` packet semantics around a generated v1model `Program`.

This module decides what happens to a packet between and after the programmable blocks, following
`targets/simple_switch/simple_switch.cpp` (ingress_thread / egress_thread):

after ingress, in this order
  1. clone (I2E): if the last clone request names a configured session, the packet *as it began this ingress
     pass* is parsed again, all metadata is zeroed except the preserved field list, `instance_type` = 1, and one
     copy per session replica (with its `egress_rid`) is enqueued. The clone is enqueued before the original.
  2. resubmit: the packet as it began this ingress pass goes back to ingress with zeroed metadata plus the
     preserved fields, `instance_type` = 6, `packet_length` of this pass. Nothing else happens to it.
  3. multicast (`mcast_grp` != 0): one copy per PRE replica (metadata copied, `egress_rid` set,
     `instance_type` = 5); the original is discarded. An unknown group replicates to nobody.
  4. `egress_spec` == 511: drop.
  5. otherwise enqueue on `egress_spec` with `instance_type` = 0.

at the start of egress: `egress_port`, `egress_global_timestamp`, the queueing metadata and `packet_length` are
set, and `egress_spec` is set to 0 (BMv2 writes drop_port + 1 into the 9-bit field).

after egress, in this order
  1. clone (E2E): a copy of the packet with the headers as egress left them, zeroed metadata plus the preserved
     fields, `instance_type` = 2, enqueued once per session replica; it runs egress itself later.
  2. `egress_spec` == 511 (`mark_to_drop` in egress): drop.
  3. compute checksum + deparse.
  4. recirculate: the deparsed packet goes back to ingress with zeroed metadata plus the preserved fields,
     `instance_type` = 4, `packet_length` = its new length.
  5. otherwise transmit on `egress_port` (truncated if `truncate` was called).

Zeroed metadata includes standard metadata: as in BMv2, resubmitted, recirculated and cloned packets see
`ingress_port` and `ingress_global_timestamp` 0 unless the program preserves them in a field list. Digests are
delivered when `digest()` runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from p4switch.runtime.context import (
    DROP_PORT,
    INSTANCE_EGRESS_CLONE,
    INSTANCE_INGRESS_CLONE,
    INSTANCE_NORMAL,
    INSTANCE_RECIRC,
    INSTANCE_REPLICATION,
    INSTANCE_RESUBMIT,
    PacketContext,
)
from p4switch.switch.pipeline import Pipeline

log = logging.getLogger("p4switch.switch")

MASK_32 = (1 << 32) - 1
MASK_48 = (1 << 48) - 1
MASK_19 = (1 << 19) - 1
EGRESS_SPEC_AT_EGRESS = (DROP_PORT + 1) & 0x1FF  # BMv2 sets drop_port + 1 into a 9-bit field: 0


@dataclass(slots=True)
class IngressPacket:
    """A packet waiting for ingress: from a port, or resubmitted/recirculated (`preserved` field values)."""

    port: int
    data: bytes
    packet_id: int = 0
    instance_type: int = INSTANCE_NORMAL
    preserved: Any = None
    packet_length: int | None = None


@dataclass(slots=True)
class QueuedPacket:
    """A packet in the traffic manager between ingress and egress."""

    ctx: PacketContext
    pipeline: Pipeline
    length: int  # BMv2's packet-length register: what egress sees as packet_length
    enq_timestamp: int = 0
    enq_qdepth: int = 0


Enqueue = Callable[[int, int, QueuedPacket], bool]
Reinject = Callable[[IngressPacket], None]
Transmit = Callable[[int, bytes], None]


@dataclass
class EngineCounters:
    """Why packets ended: visible through `Switch.stats()` and the CLI's exit summary."""

    received: int = 0
    transmitted: int = 0
    dropped_ingress: int = 0
    dropped_egress: int = 0
    dropped_priority: int = 0
    dropped_queue_full: int = 0
    resubmitted: int = 0
    recirculated: int = 0
    cloned: int = 0
    replicated: int = 0
    errors: int = 0


def log_packet_error(stage: str, port: int, exc: BaseException) -> None:
    """One line per failed packet (the traceback only at debug level): a bad packet is not a crash."""
    direction = "from" if stage == "ingress" else "for"
    log.error("%s failed on a packet %s port %d: %s: %s; packet dropped", stage, direction, port,
              type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG))


class V1Model:
    """Runs the v1model blocks of a pipeline on one packet and carries out BMv2's decisions through callbacks:
    `enqueue(port, priority, item) -> accepted` (traffic manager), `reinject(packet)` (resubmit/recirculate
    input) and `transmit(port, frame)`. Stateless apart from counters, so one instance serves every thread."""

    def __init__(
        self,
        *,
        enqueue: Enqueue,
        reinject: Reinject,
        transmit: Transmit,
        clock_us: Callable[[], int],
        priority_queues: int = 1,
    ) -> None:
        self.enqueue = enqueue
        self.reinject = reinject
        self.transmit = transmit
        self.clock_us = clock_us
        self.priority_queues = priority_queues
        self.counters = EngineCounters()

    # ------------------------------------------------------------------------------------------------ ingress

    def ingress(self, pipeline: Pipeline, pkt: IngressPacket) -> None:
        if (pkt.instance_type == INSTANCE_NORMAL and pkt.preserved is None and pkt.packet_length is None
                and pipeline.port_ingress is not None):
            self.ingress_frame(pipeline, pkt.port, pkt.data, pkt.packet_id)
            return
        self._ingress_pass(pipeline, pkt.port, pkt.data, pkt.packet_id, pkt.instance_type, pkt.preserved,
                           pkt.packet_length)

    def ingress_frame(self, pipeline: Pipeline, port: int, data: bytes, packet_id: int = 0) -> None:
        """`ingress` of a frame from a port (no `IngressPacket`): the program's fused entry (`Program.port_ingress`:
        init, this port packet's standard metadata, parse, verify, ingress) and, for the common outcome (no clone,
        resubmit or multicast), the unicast decision inline. The same steps in the same order as `_ingress_pass`:
        the received count and the clock read before the program runs, `instance_type` left 0."""
        fused = pipeline.port_ingress
        if fused is None:
            self._ingress_pass(pipeline, port, data, packet_id, INSTANCE_NORMAL, None, None)
            return
        ctx = PacketContext(data, packet_id)
        length = len(data)
        self.counters.received += 1
        fused(ctx, port, self.clock_us() & MASK_48, length)
        sm = ctx.sm
        if ctx.clone_requests or ctx.resubmit_field_list is not None or sm.mcast_grp:
            self._after_ingress(pipeline, ctx, port, data, packet_id, length)
            return
        egress_spec = sm.egress_spec
        if egress_spec == DROP_PORT:
            self.counters.dropped_ingress += 1
            return
        sm.instance_type = INSTANCE_NORMAL
        priority = sm.priority
        if priority >= self.priority_queues:  # `_enqueue`, inline
            self.counters.dropped_priority += 1
            log.debug("priority %d out of range (%d queues): packet dropped", priority, self.priority_queues)
            return
        if not self.enqueue(egress_spec, priority, QueuedPacket(ctx, pipeline, length)):
            self.counters.dropped_queue_full += 1

    def _ingress_pass(self, pipeline: Pipeline, port: int, data: bytes, packet_id: int, instance_type: int,
                      preserved: Any, packet_length: int | None) -> None:
        """One ingress pass with the entry points one by one: resubmitted and recirculated packets (zeroed
        metadata plus the preserved fields), and programs without a fused entry."""
        program = pipeline.program
        ctx = PacketContext(data, packet_id)
        program.init(ctx)
        sm = ctx.sm
        length = len(data) if packet_length is None else packet_length
        if instance_type == INSTANCE_NORMAL:
            # only a packet from a port gets these; BMv2 zeroes them for resubmitted/recirculated packets
            sm.ingress_port = port
            sm.ingress_global_timestamp = self.clock_us() & MASK_48
            self.counters.received += 1
        sm.packet_length = length
        sm.instance_type = instance_type
        if preserved is not None:
            program.restore_field_list(ctx, preserved)
        program.parse(ctx)
        program.verify_checksum(ctx)
        program.ingress(ctx)
        self._after_ingress(pipeline, ctx, port, data, packet_id, length)

    def _after_ingress(self, pipeline: Pipeline, ctx: PacketContext, port: int, data: bytes, packet_id: int,
                       length: int) -> None:
        """BMv2's decisions after ingress (the module docstring's order): clone, resubmit, multicast, drop,
        enqueue."""
        sm = ctx.sm
        if ctx.clone_requests:
            self._ingress_clone(pipeline, port, data, packet_id, ctx, length)

        if ctx.resubmit_field_list is not None:
            fl = ctx.resubmit_field_list
            preserved = pipeline.program.save_field_list(ctx, fl) if fl else None
            self.counters.resubmitted += 1
            self.reinject(IngressPacket(port, data, packet_id, INSTANCE_RESUBMIT, preserved, length))
            return

        mgid = sm.mcast_grp
        if mgid:
            sm.instance_type = INSTANCE_REPLICATION
            self._replicate(pipeline, ctx, pipeline.state.pre.replicas(mgid), length)
            return

        egress_spec = sm.egress_spec
        if egress_spec == DROP_PORT:
            self.counters.dropped_ingress += 1
            return
        sm.instance_type = INSTANCE_NORMAL
        if ctx.clone_requests:
            ctx.clone_requests = []
        self._enqueue(egress_spec, QueuedPacket(ctx, pipeline, length))

    def _ingress_clone(self, pipeline: Pipeline, port: int, data: bytes, packet_id: int, ctx: PacketContext,
                       length: int) -> None:
        _clone_type, session_id, field_list = ctx.clone_requests[-1]
        session = pipeline.state.pre.clone_sessions.get(session_id)
        if session is None:
            return
        program = pipeline.program
        preserved = program.save_field_list(ctx, field_list) if field_list else None
        clone = PacketContext(data, packet_id=packet_id, copy_id=1)
        program.init(clone)
        clone.sm.ingress_port = port  # parsers may branch on it; zeroed again below, as in BMv2
        program.parse(clone)
        self._fresh_metadata(program, clone)
        if preserved is not None:
            program.restore_field_list(clone, preserved)
        clone.sm.instance_type = INSTANCE_INGRESS_CLONE
        if session.packet_length_bytes:
            clone.truncate_length = session.packet_length_bytes
        self.counters.cloned += 1
        self._replicate(pipeline, clone, session.replicas, length)

    def _replicate(self, pipeline: Pipeline, ctx: PacketContext, replicas: Any, length: int) -> None:
        """One copy of `ctx` per replica. Every caller discards `ctx` afterwards (a multicast original, a fresh
        clone), so the last replica takes `ctx` itself: one deep copy fewer per replication."""
        program = pipeline.program
        replicas = tuple(replicas)
        last = len(replicas) - 1
        for i, replica in enumerate(replicas):
            if i == last:
                copy = ctx
            else:
                copy = program.clone_ctx(ctx)
                copy.data = ctx.data
                copy.payload_offset = ctx.payload_offset
                copy.truncate_length = ctx.truncate_length
                copy.packet_id = ctx.packet_id
            copy.clear_requests()
            copy.sm.egress_rid = replica.rid
            self.counters.replicated += 1
            self._enqueue(replica.port, QueuedPacket(copy, pipeline, length))

    def _enqueue(self, port: int, item: QueuedPacket) -> None:
        priority = item.ctx.sm.priority
        if priority >= self.priority_queues:
            # BMv2: "Priority out of range, dropping packet"
            self.counters.dropped_priority += 1
            log.debug("priority %d out of range (%d queues): packet dropped", priority, self.priority_queues)
            return
        if not self.enqueue(port, priority, item):
            self.counters.dropped_queue_full += 1

    @staticmethod
    def _fresh_metadata(program: Any, ctx: PacketContext) -> None:
        scratch = PacketContext(b"")
        program.init(scratch)
        ctx.m = scratch.m
        ctx.sm = scratch.sm

    # ------------------------------------------------------------------------------------------------- egress

    def egress(self, item: QueuedPacket, port: int, deq_qdepth: int) -> None:
        pipeline = item.pipeline
        program = pipeline.program
        ctx = item.ctx
        # An empty egress control (`Program.egress_noop`, decided by the compiler) reads nothing, clones nothing
        # and drops nothing, and no later block can read the standard metadata it would have seen (the checksum
        # control and the deparser take headers and user metadata only; a recirculation starts from zeroed
        # metadata): all of it is skipped, which is most of this pass for such programs.
        if not getattr(program, "egress_noop", False):
            sm = ctx.sm
            now = self.clock_us()
            sm.egress_global_timestamp = now & MASK_48
            sm.enq_timestamp = item.enq_timestamp & MASK_32
            sm.enq_qdepth = item.enq_qdepth & MASK_19
            sm.deq_timedelta = (now - item.enq_timestamp) & MASK_32
            sm.deq_qdepth = deq_qdepth & MASK_19
            sm.egress_port = port
            sm.egress_spec = EGRESS_SPEC_AT_EGRESS
            sm.packet_length = item.length
            program.egress(ctx)

            if ctx.clone_requests:
                self._egress_clone(pipeline, ctx, item.length)

            if sm.egress_spec == DROP_PORT:
                self.counters.dropped_egress += 1
                return
        program.compute_checksum(ctx)
        data = program.deparse(ctx)

        if ctx.recirculate_field_list is not None:
            fl = ctx.recirculate_field_list
            preserved = program.save_field_list(ctx, fl) if fl else None
            self.counters.recirculated += 1
            self.reinject(IngressPacket(port, data, ctx.packet_id, INSTANCE_RECIRC, preserved, len(data)))
            return
        if ctx.truncate_length is not None and ctx.truncate_length < len(data):
            data = data[: ctx.truncate_length]
        self.counters.transmitted += 1
        self.transmit(port, data)

    def _egress_clone(self, pipeline: Pipeline, ctx: PacketContext, length: int) -> None:
        _clone_type, session_id, field_list = ctx.clone_requests[-1]
        ctx.clone_requests = []
        session = pipeline.state.pre.clone_sessions.get(session_id)
        if session is None:
            return
        program = pipeline.program
        preserved = program.save_field_list(ctx, field_list) if field_list else None
        clone = program.clone_ctx(ctx)
        clone.data = ctx.data
        clone.payload_offset = ctx.payload_offset
        clone.packet_id = ctx.packet_id
        clone.copy_id = ctx.copy_id + 1
        clone.clear_requests()
        clone.truncate_length = session.packet_length_bytes or None
        self._fresh_metadata(program, clone)
        if preserved is not None:
            program.restore_field_list(clone, preserved)
        clone.sm.instance_type = INSTANCE_EGRESS_CLONE
        self.counters.cloned += 1
        self._replicate(pipeline, clone, session.replicas, length)
