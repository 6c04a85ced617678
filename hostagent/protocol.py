"""The p4ina aggregation wire protocol, defined once (byte layout and semantics: docs/protocol.md).

Two views of the same bytes:
- Scapy layers (`AggHeader`, `AggValues32/16/8`) bound to UDP port `AGG_PORT`, for building, dissecting and
  displaying packets in tests and tools;
- plain constants (sizes, offsets, a `struct` format and numpy dtypes) so that a worker's hot path can fill a
  pre-built frame template with numpy and `struct.pack_into`, without Scapy.
The P4 program (p4src/include/headers.p4) declares the same layout; change one, change both.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
from scapy.fields import (
    BitEnumField,
    BitField,
    ByteField,
    FieldListField,
    FlagsField,
    IntField,
    ShortField,
    SignedByteField,
    SignedIntField,
    SignedShortField,
    XIntField,
)
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from hostagent.exceptions import ProtocolError

# --- addressing -------------------------------------------------------------------------------------------------

#: UDP destination port of every DATA packet and of every packet between switches; source port of every packet a
#: switch sends. A RESULT to a worker goes to the worker's own UDP port (the source port of its DATA).
AGG_PORT = 0xBEE0  # 48864
#: DSCP of gradient traffic (EF): the switch maps it to the highest priority class.
DSCP_GRADIENT = 46
#: IPv4 ToS byte carrying DSCP_GRADIENT (ECN bits zero).
TOS_GRADIENT = DSCP_GRADIENT << 2

# --- the aggregation header ---------------------------------------------------------------------------------------

#: Values per packet, whatever the element format: the default build of p4src/p4ina.p4 (and what real BMv2 and
#: hardware-style pipelines use). A pipeline may be built for another N (`-D AGG_VALUES=N`, one of
#: `SUPPORTED_VALUES`); every function below takes the N of the job as `lanes`.
VALUES_PER_PACKET = 64
SUPPORTED_VALUES = (32, 64, 128, 256, 512, 1024, 2048)

#: Element formats (the 2-bit `fmt` field).
FMT_INT32 = 0
FMT_INT16 = 1
FMT_INT8 = 2
FORMAT_NAMES = {FMT_INT32: "int32", FMT_INT16: "int16", FMT_INT8: "int8"}
#: Bytes per element for each format.
ELEMENT_SIZE = {FMT_INT32: 4, FMT_INT16: 2, FMT_INT8: 1}
#: numpy dtype of the value vector on the wire (network byte order) for each format.
VALUE_DTYPE: dict[int, np.dtype[Any]] = {FMT_INT32: np.dtype(">i4"), FMT_INT16: np.dtype(">i2"), FMT_INT8: np.dtype("i1")}
#: Inclusive range of one element for each format.
VALUE_RANGE = {FMT_INT32: (-(2**31), 2**31 - 1), FMT_INT16: (-(2**15), 2**15 - 1), FMT_INT8: (-(2**7), 2**7 - 1)}

#: Flag bits (the 6-bit `flags` field; values as they appear in the low 6 bits of header byte 4).
FLAG_RESULT = 0x01  # a (partial sum going up: 0) / final sum going down: 1
FLAG_RETX = 0x02  # the sender already sent this packet once (informational; the switch dedups by bitmap)
FLAG_OVERFLOW = 0x04  # some element saturated while aligning or summing: the values are clamped, not exact
FLAG_CORRUPT = 0x08  # the root found sum(values) != checksum before requantizing: discard and retransmit
FLAG_PULL = 0x10  # switch to switch after a tree rebuild: request (or, with RESULT, answer) a stored RESULT
FLAG_NAMES = ["RESULT", "RETX", "OVERFLOW", "CORRUPT", "PULL", "RSVD5"]

#: Largest child index at one tree level (the switch keeps a 32-bit bitmap per slot).
MAX_CHILDREN = 32

#: Byte layout of the aggregation header, network byte order. Fields in order:
#: job_id, slot, fmt_flags (fmt << 6 | flags), ver_child (ver << 7 | child), exp (signed), rsvd, count, rsvd2,
#: seq, step, csum.
AGG_HDR_STRUCT = struct.Struct("!HHBBbBHHIII")
AGG_HDR_LEN = AGG_HDR_STRUCT.size  # 24

#: The same layout as a numpy structured dtype (for batch parsing of received headers).
AGG_HDR_DTYPE = np.dtype(
    [
        ("job_id", ">u2"),
        ("slot", ">u2"),
        ("fmt_flags", "u1"),
        ("ver_child", "u1"),
        ("exp", "i1"),
        ("rsvd", "u1"),
        ("count", ">u2"),
        ("rsvd2", ">u2"),
        ("seq", ">u4"),
        ("step", ">u4"),
        ("csum", ">u4"),
    ]
)

#: Offsets of each field inside the aggregation header.
OFF_JOB_ID = 0
OFF_SLOT = 2
OFF_FMT_FLAGS = 4
OFF_VER_CHILD = 5
OFF_EXP = 6
OFF_COUNT = 8
OFF_SEQ = 12
OFF_STEP = 16
OFF_CSUM = 20

# --- whole frames -------------------------------------------------------------------------------------------------

ETH_LEN = 14
IPV4_LEN = 20  # no options
UDP_LEN = 8
#: Offset of the aggregation header in an Ethernet frame.
AGG_OFFSET = ETH_LEN + IPV4_LEN + UDP_LEN  # 42
#: Offset of the first value in an Ethernet frame.
VALUES_OFFSET = AGG_OFFSET + AGG_HDR_LEN  # 66


def check_lanes(lanes: int) -> int:
    """`lanes` if the P4 program can be built for that many values per packet, else ProtocolError."""
    if lanes not in SUPPORTED_VALUES:
        raise ProtocolError(
            f"{lanes} values per packet is not a build of p4ina.p4 (one of {', '.join(map(str, SUPPORTED_VALUES))})")
    return lanes


def values_len(fmt: int, lanes: int = VALUES_PER_PACKET) -> int:
    """Bytes of the value vector of `lanes` values in format `fmt`."""
    return lanes * ELEMENT_SIZE[fmt]


def frame_len(fmt: int, lanes: int = VALUES_PER_PACKET) -> int:
    """Length of a whole aggregation frame (no FCS) in format `fmt`: 322, 194 or 130 bytes for 64 values."""
    return VALUES_OFFSET + values_len(fmt, lanes)


def udp_len(fmt: int, lanes: int = VALUES_PER_PACKET) -> int:
    """Value of the UDP length field for format `fmt`."""
    return UDP_LEN + AGG_HDR_LEN + values_len(fmt, lanes)


def ipv4_total_len(fmt: int, lanes: int = VALUES_PER_PACKET) -> int:
    """Value of the IPv4 total-length field for format `fmt`."""
    return IPV4_LEN + udp_len(fmt, lanes)


def lanes_of(fmt: int, payload_len: int) -> int | None:
    """Values in a UDP payload of `payload_len` bytes (aggregation header included), None if not a whole vector."""
    body = payload_len - AGG_HDR_LEN
    size = ELEMENT_SIZE.get(fmt)
    if size is None or body <= 0 or body % size:
        return None
    return body // size


def max_frame_len(lanes: int) -> int:
    """The largest frame of a job with `lanes` values (int32): what the links' MTU must carry, minus Ethernet."""
    return frame_len(FMT_INT32, lanes)


def checksum(values: np.ndarray | list[int]) -> int:
    """The linear checksum: the sum of the (signed) values modulo 2**32, as an unsigned 32-bit int."""
    return int(np.asarray(values, dtype=np.int64).sum()) & 0xFFFFFFFF


def pack_fmt_flags(fmt: int, flags: int) -> int:
    """Header byte 4 from a format and flag bits."""
    return ((fmt & 0x3) << 6) | (flags & 0x3F)


def pack_ver_child(ver: int, child: int) -> int:
    """Header byte 5 from a slot version (0/1) and the sender's child index."""
    return ((ver & 0x1) << 7) | (child & 0x1F)


# --- Scapy layers -------------------------------------------------------------------------------------------------


class AggHeader(Packet):
    """The aggregation header: which job, slot and version this chunk updates, who sent it, and how to read the
    values that follow (format, exponent, checksum)."""

    name = "P4INA Aggregation"
    fields_desc = [
        ShortField("job_id", 0),
        ShortField("slot", 0),
        BitEnumField("fmt", FMT_INT32, 2, FORMAT_NAMES),
        FlagsField("flags", 0, 6, FLAG_NAMES),
        BitField("ver", 0, 1),
        BitField("rsvd0", 0, 2),
        BitField("child", 0, 5),
        SignedByteField("exp", 0),
        ByteField("rsvd", 0),
        ShortField("count", 1),
        ShortField("rsvd2", 0),
        IntField("seq", 0),
        IntField("step", 0),
        XIntField("csum", 0),
    ]

    def mysummary(self) -> str:
        kind = "RESULT" if self.flags & FLAG_RESULT else "DATA"
        return self.sprintf(
            f"P4INA {kind} job=%job_id% slot=%slot%/v%ver% seq=%seq% child=%child% count=%count% "
            "fmt=%fmt% exp=%exp% flags=%flags%"
        )


class _AggValues(Packet):
    """Common base of the value vectors: N signed elements, nothing after them. N is not fixed by the layer: it is
    the length of `values` when building and the rest of the UDP payload when dissecting (UDP trims the frame to
    its length field), so one layer serves every build of the program; `agg_layers(..., lanes=N)` checks N."""

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s

    def mysummary(self) -> str:
        vals = self.values
        head = ", ".join(str(v) for v in vals[:4])
        return f"{self.name} [{head}, ...] sum={checksum(vals):#010x}"


def _vector(element: SignedIntField | SignedShortField | SignedByteField) -> FieldListField:
    default: list[int] = [0] * VALUES_PER_PACKET
    return FieldListField("values", default, element, max_count=max(SUPPORTED_VALUES))  # type: ignore[arg-type]


class AggValues32(_AggValues):
    """N x int32: the reference format."""

    name = "P4INA values int32"
    fields_desc = [_vector(SignedIntField("", 0))]


class AggValues16(_AggValues):
    """N x int16: quantized contributions or results."""

    name = "P4INA values int16"
    fields_desc = [_vector(SignedShortField("", 0))]


class AggValues8(_AggValues):
    """N x int8: quantized contributions or results."""

    name = "P4INA values int8"
    fields_desc = [_vector(SignedByteField("", 0))]


VALUES_LAYER: dict[int, type[_AggValues]] = {FMT_INT32: AggValues32, FMT_INT16: AggValues16, FMT_INT8: AggValues8}

bind_layers(UDP, AggHeader, dport=AGG_PORT)
bind_layers(UDP, AggHeader, sport=AGG_PORT)
bind_layers(AggHeader, AggValues32, fmt=FMT_INT32)
bind_layers(AggHeader, AggValues16, fmt=FMT_INT16)
bind_layers(AggHeader, AggValues8, fmt=FMT_INT8)


def agg_layers(
    values: np.ndarray | list[int],
    *,
    job_id: int,
    slot: int,
    ver: int,
    seq: int,
    child: int = 0,
    fmt: int = FMT_INT32,
    exp: int = 0,
    flags: int = 0,
    count: int = 1,
    step: int = 0,
    lanes: int = VALUES_PER_PACKET,
) -> Packet:
    """`AggHeader / AggValuesNN` for `values`, with the checksum filled in (the layers above UDP of a DATA).

    `lanes` is the job's values per packet (the pipeline's N): `values` must have exactly that many."""
    check_lanes(lanes)
    vals = [int(v) for v in values]
    if len(vals) != lanes:
        raise ProtocolError(f"an aggregation packet of this job carries {lanes} values, not {len(vals)}")
    lo, hi = VALUE_RANGE[fmt]
    if any(v < lo or v > hi for v in vals):
        raise ProtocolError(f"values out of range for {FORMAT_NAMES[fmt]}")
    hdr = AggHeader(
        job_id=job_id, slot=slot, ver=ver, child=child, fmt=fmt, exp=exp, flags=flags, count=count, seq=seq, step=step
    )
    hdr.csum = checksum(vals)
    return hdr / VALUES_LAYER[fmt](values=vals)
