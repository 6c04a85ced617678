"""A hand-written pipeline module that follows the code generator's contract (docs/architecture.md), for testing
the engine's BMv2 semantics independently of the compiler.

Wire format: an 8-byte control header, then the payload.
  ctl: port, mcast, i2e_session, resubmit_rounds, recirc_rounds, e2e_session, priority, flags
       flags bit0: mark_to_drop in egress; bit1: preserve field list 1 on clones; bit2: a failing assert
Egress appends a 17-byte observation header after ctl (`OBS`): instance_type, egress_rid(16), egress_port(16),
packet_length(16), resubmits, recircs, ingress_port(16), enq_qdepth, deq_qdepth, deq_timedelta(32).
"""

from __future__ import annotations

import json
import struct
from typing import Any

SOURCE = r'''
import struct
from p4switch.exceptions import PacketProcessingError
from p4switch.runtime.context import PacketContext, StandardMetadata


class Headers:
    __slots__ = ("ctl", "ctl_valid", "obs", "obs_valid")

    def __init__(self):
        self.ctl = [0] * 8
        self.ctl_valid = False
        self.obs = b""
        self.obs_valid = False


class Meta:
    __slots__ = ("resubmits", "recircs", "mark")

    def __init__(self):
        self.resubmits = 0
        self.recircs = 0
        self.mark = 0


FIELD_LISTS = {1: ("resubmits", "recircs", "mark"), 2: ("recircs",)}


class Program:
    def __init__(self, rt):
        self.rt = rt

    def init(self, ctx):
        ctx.h = Headers()
        ctx.m = Meta()
        ctx.sm = StandardMetadata()

    def parse(self, ctx):
        if len(ctx.data) < 8:
            ctx.sm.parser_error = 2  # PacketTooShort
            ctx.payload_offset = 0
            return
        ctx.h.ctl = list(ctx.data[:8])
        ctx.h.ctl_valid = True
        ctx.payload_offset = 8

    def verify_checksum(self, ctx):
        pass

    def ingress(self, ctx):
        h, m, sm = ctx.h, ctx.m, ctx.sm
        if not h.ctl_valid:
            sm.egress_spec = 511
            return
        port, mcast, i2e, resub, recirc, e2e, prio, flags = h.ctl
        if flags & 4:
            raise PacketProcessingError("assert(false) failed")
        sm.priority = prio
        if i2e:
            ctx.clone_requests.append((0, i2e, 1 if flags & 2 else None))
        if m.resubmits < resub:
            m.resubmits += 1
            ctx.resubmit_field_list = 1
            return
        if mcast:
            sm.mcast_grp = mcast
        elif port == 0xFF:
            sm.egress_spec = 511
            sm.mcast_grp = 0
        else:
            sm.egress_spec = port

    def egress(self, ctx):
        h, m, sm = ctx.h, ctx.m, ctx.sm
        port, mcast, i2e, resub, recirc, e2e, prio, flags = h.ctl
        if e2e and sm.instance_type != 2:
            ctx.clone_requests.append((1, e2e, 1 if flags & 2 else None))
        if m.recircs < recirc and sm.instance_type != 2:
            m.recircs += 1
            ctx.recirculate_field_list = 1
            return
        h.obs = struct.pack(
            ">BHHHBBHBBI", sm.instance_type, sm.egress_rid, sm.egress_port, sm.packet_length,
            m.resubmits, m.recircs, sm.ingress_port, min(sm.enq_qdepth, 255), min(sm.deq_qdepth, 255),
            sm.deq_timedelta,
        )
        h.obs_valid = True
        if flags & 1 and sm.instance_type == 0:
            sm.egress_spec = 511

    def compute_checksum(self, ctx):
        pass

    def deparse(self, ctx):
        out = bytes(ctx.h.ctl) if ctx.h.ctl_valid else b""
        if ctx.h.obs_valid:
            out += ctx.h.obs
        return out + ctx.data[ctx.payload_offset:]

    def clone_ctx(self, ctx):
        c = PacketContext(ctx.data, packet_id=ctx.packet_id, copy_id=ctx.copy_id)
        c.payload_offset = ctx.payload_offset
        h = Headers()
        h.ctl = list(ctx.h.ctl)
        h.ctl_valid = ctx.h.ctl_valid
        h.obs = ctx.h.obs
        h.obs_valid = ctx.h.obs_valid
        c.h = h
        m = Meta()
        m.resubmits, m.recircs, m.mark = ctx.m.resubmits, ctx.m.recircs, ctx.m.mark
        c.m = m
        c.sm = ctx.sm.copy()
        return c

    def save_field_list(self, ctx, n):
        return tuple(getattr(ctx.m, f) for f in FIELD_LISTS[n]), n

    def restore_field_list(self, ctx, saved):
        values, n = saved
        for f, v in zip(FIELD_LISTS[n], values):
            setattr(ctx.m, f, v)

    def reset_metadata(self, ctx):
        ctx.m = Meta()


def build(rt):
    return Program(rt)
'''

OBS = struct.Struct(">BHHHBBHBBI")
OBS_SIZE = OBS.size


def device_config(**extra: Any) -> bytes:
    return json.dumps({"format": "p4ina-v1model/1", "name": "ctlprog", "python": SOURCE, **extra}).encode()


def ctl(
    port: int = 1,
    mcast: int = 0,
    i2e: int = 0,
    resubmit: int = 0,
    recirc: int = 0,
    e2e: int = 0,
    priority: int = 0,
    flags: int = 0,
    payload: bytes = b"payload!",
) -> bytes:
    return bytes([port, mcast, i2e, resubmit, recirc, e2e, priority, flags]) + payload


def observe(frame: bytes) -> dict[str, int]:
    """Decode the observation header the egress control appended after the 8-byte ctl header."""
    (itype, rid, eport, plen, resubs, recircs, iport, qdepth, deq_qdepth, deq_us) = OBS.unpack_from(frame, 8)
    return {
        "instance_type": itype,
        "egress_rid": rid,
        "egress_port": eport,
        "packet_length": plen,
        "resubmits": resubs,
        "recircs": recircs,
        "ingress_port": iport,
        "enq_qdepth": qdepth,
        "deq_qdepth": deq_qdepth,
        "deq_timedelta": deq_us,
    }
