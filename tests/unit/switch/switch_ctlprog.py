"""The engine tests' contract program, `ctlprog.p4`, compiled by the embedded compiler, for testing the engine's
BMv2 semantics (the device config carries P4, not code, so the program is P4 too).

Wire format: an 8-byte control header, then the payload.
  ctl: port, mcast, i2e_session, resubmit_rounds, recirc_rounds, e2e_session, priority, flags
       flags bit0: mark_to_drop in egress; bit1: preserve field list 1 on clones; bit2: a failing assert
Egress appends a 17-byte observation header after ctl (`OBS`): instance_type, egress_rid(16), egress_port(16),
packet_length(16), resubmits, recircs, ingress_port(16), enq_qdepth, deq_qdepth, deq_timedelta(32).
"""

from __future__ import annotations

import functools
import struct
from pathlib import Path

from p4.config.v1 import p4info_pb2

from p4switch.compiler import CompiledProgram, compile_file

PROGRAM = Path(__file__).with_name("ctlprog.p4")


@functools.cache
def compiled() -> CompiledProgram:
    return compile_file(PROGRAM)


def device_config() -> bytes:
    return compiled().device_config_bytes()


def p4info() -> p4info_pb2.P4Info:
    """A fresh copy of the program's P4Info (what a controller sends with the device config)."""
    info = p4info_pb2.P4Info()
    info.CopyFrom(compiled().p4info)
    return info


def p4info_text() -> str:
    return compiled().p4info_text()


OBS = struct.Struct(">BHHHBBHBBI")
OBS_SIZE = OBS.size


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
