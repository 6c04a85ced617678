"""The hot path: every DATA frame of an all-reduce built at once with numpy from one Scapy-built template, and
RESULT payloads read with `struct` and `np.frombuffer` (`parse_payload`, one at a time) or a burst at once as
structured views (`header_view`, `values_view`).

Scapy builds one frame per (worker, format) once, so Ethernet/IPv4/UDP are right by construction (lengths, IPv4
checksum, ToS): a frame's L2-L4 bytes never change between chunks because every chunk has the same size. The
chunk-dependent bytes (aggregation header and values) are then written for all chunks in a few vectorised numpy
assignments into one (n_chunks, frame_len) array; sending chunk k is `transport.send(frames[k])`. No Scapy object
and no per-value Python exists on the hot path (`hostagent.perf` measures the rate).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hostagent import protocol as P
from hostagent.exceptions import ProtocolError


def wire_dtype(fmt: int) -> np.dtype[Any]:
    """numpy dtype of the value vector in format `fmt` (network byte order)."""
    return cast("np.dtype[Any]", P.VALUE_DTYPE[fmt])


@dataclass(frozen=True)
class Endpoints:
    """Addresses of one worker's DATA: itself (source, and the UDP port RESULTs come back to) and its leaf switch."""

    src_mac: str = "02:00:00:00:00:01"
    dst_mac: str = "02:00:00:00:01:00"
    src_ip: str = "10.0.0.1"
    dst_ip: str = "10.0.1.254"
    udp_port: int = P.AGG_PORT


def build_template(ep: Endpoints, fmt: int, lanes: int = P.VALUES_PER_PACKET) -> npt.NDArray[np.uint8]:
    """One complete DATA frame of format `fmt` with `lanes` values (header and values zero), built once with
    Scapy."""
    layers = P.agg_layers([0] * lanes, job_id=0, slot=0, ver=0, seq=0, fmt=fmt, lanes=lanes)
    frame = (
        Ether(src=ep.src_mac, dst=ep.dst_mac)
        / IP(src=ep.src_ip, dst=ep.dst_ip, tos=P.TOS_GRADIENT, ttl=64)
        / UDP(sport=ep.udp_port, dport=P.AGG_PORT, chksum=0)
        / layers
    )
    raw = bytes(frame)
    if len(raw) != P.frame_len(fmt, lanes):
        raise ProtocolError(f"template is {len(raw)} bytes, the protocol says {P.frame_len(fmt, lanes)}")
    return np.frombuffer(raw, dtype=np.uint8).copy()


@dataclass(frozen=True)
class ChunkHeaders:
    """Per-chunk header values of one all-reduce (arrays of n_chunks), shared fields as scalars."""

    job_id: int
    child: int
    step: int
    slots: npt.NDArray[np.integer]
    versions: npt.NDArray[np.integer]
    seqs: npt.NDArray[np.integer]
    exps: npt.NDArray[np.integer]


def fill_frames(
    template: npt.NDArray[np.uint8],
    fmt: int,
    hdr: ChunkHeaders,
    values: npt.NDArray[Any],
    out: npt.NDArray[np.uint8] | None = None,
) -> npt.NDArray[np.uint8]:
    """All DATA frames of an all-reduce: a (n_chunks, frame_len) uint8 array, one frame per row.

    `values` is (n_chunks, lanes) of integers already in range for `fmt`, `lanes` the template's; the checksum is
    computed here. `out` (that shape, uint8) is reused when given: a worker's buffer from its previous call, every
    byte rewritten, so a step allocates (and page-faults) nothing."""
    n = values.shape[0]
    flen = template.shape[0]
    if values.ndim != 2 or P.VALUES_OFFSET + P.values_len(fmt, values.shape[1]) != flen:
        raise ProtocolError(f"{values.shape} values do not fit a {flen}-byte {P.FORMAT_NAMES[fmt]} frame template")
    frames = out if out is not None and out.shape == (n, flen) else np.empty((n, flen), dtype=np.uint8)
    if n == 0:
        return frames
    frames[:, : P.AGG_OFFSET] = template[: P.AGG_OFFSET]  # Ethernet/IPv4/UDP: the same for every chunk
    head = np.zeros(n, dtype=P.AGG_HDR_DTYPE)
    head["job_id"] = hdr.job_id
    head["slot"] = hdr.slots
    head["fmt_flags"] = P.pack_fmt_flags(fmt, 0)
    head["ver_child"] = (np.asarray(hdr.versions, dtype=np.uint8) << 7) | (hdr.child & 0x1F)
    head["exp"] = hdr.exps
    head["count"] = 1
    head["seq"] = hdr.seqs
    head["step"] = hdr.step & 0xFFFFFFFF
    head["csum"] = row_checksums(values)
    frames[:, P.AGG_OFFSET : P.VALUES_OFFSET] = head.view(np.uint8).reshape(n, P.AGG_HDR_LEN)
    frames[:, P.VALUES_OFFSET :].view(wire_dtype(fmt))[...] = values
    return frames


def row_checksums(values: npt.NDArray[Any]) -> npt.NDArray[np.uint32]:
    """`protocol.checksum` of every row of a 2-D array of values at once. Native int32 rows (what a worker sends)
    are summed as wrapping uint32, which is the sum modulo 2**32 without an int64 pass."""
    if values.dtype == np.int32 and values.flags.c_contiguous:
        return cast("npt.NDArray[np.uint32]", np.add.reduce(values.view(np.uint32), axis=1, dtype=np.uint32))
    return (values.sum(axis=1, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


def mark_retransmission(frame: npt.NDArray[np.uint8]) -> None:
    """Set the RETX flag of a DATA frame in place (informational for the switch, visible in captures)."""
    frame[P.AGG_OFFSET + P.OFF_FMT_FLAGS] |= P.FLAG_RETX


@dataclass(frozen=True)
class Result:
    """A parsed aggregation packet (from the UDP payload): what a worker checks before accepting a RESULT."""

    job_id: int
    slot: int
    fmt: int
    flags: int
    version: int
    child: int
    exp: int
    count: int
    seq: int
    step: int
    csum: int
    values: npt.NDArray[np.signedinteger]

    @property
    def checksum_ok(self) -> bool:
        return P.checksum(self.values) == self.csum


_HDR = P.AGG_HDR_STRUCT


def parse_payload(payload: bytes, lanes: int = P.VALUES_PER_PACKET) -> Result | None:
    """Parse an aggregation header and its `lanes` values; None when the payload is too short or its format
    invalid. Longer payloads are read up to `lanes` values: `payload_lanes` tells a receiver whose N they carry."""
    if len(payload) < P.AGG_HDR_LEN:
        return None
    job_id, slot, fmt_flags, ver_child, exp, _r, count, _r2, seq, step, csum = _HDR.unpack_from(payload, 0)
    fmt = fmt_flags >> 6
    if fmt not in P.ELEMENT_SIZE or len(payload) < P.AGG_HDR_LEN + P.values_len(fmt, lanes):
        return None
    values = np.frombuffer(payload, dtype=wire_dtype(fmt), count=lanes, offset=P.AGG_HDR_LEN)
    return Result(
        job_id, slot, fmt, fmt_flags & 0x3F, ver_child >> 7, ver_child & 0x1F, exp, count, seq, step, csum, values
    )


_RECORDS: dict[int, np.dtype[Any]] = {}


def header_view(buf: bytes, length: int) -> npt.NDArray[np.void]:
    """The aggregation headers of `len(buf) // length` payloads of `length` bytes (>= AGG_HDR_LEN) laid end to
    end, as one structured array over `buf` (no copy): a burst of RESULTs parsed by a handful of numpy calls."""
    dt = _RECORDS.get(length)
    if dt is None:
        fields = P.AGG_HDR_DTYPE.fields
        assert fields is not None
        names = list(P.AGG_HDR_DTYPE.names or ())
        dt = _RECORDS[length] = np.dtype({"names": names, "formats": [fields[k][0] for k in names],
                                          "offsets": [fields[k][1] for k in names], "itemsize": length})
    return np.frombuffer(buf, dtype=dt, count=len(buf) // length)


def values_view(buf: bytes, length: int, fmt: int, lanes: int) -> npt.NDArray[np.signedinteger]:
    """The first `lanes` values in format `fmt` of each payload of `length` bytes in `buf` (as `header_view`): a
    (count, lanes) view, no copy. Needs length >= AGG_HDR_LEN + values_len(fmt, lanes)."""
    count = len(buf) // length
    if length < P.AGG_HDR_LEN + P.values_len(fmt, lanes):
        raise ProtocolError(f"payloads of {length} bytes do not hold {lanes} {P.FORMAT_NAMES[fmt]} values")
    dt = wire_dtype(fmt)
    return np.ndarray((count, lanes), dtype=dt, buffer=buf, offset=P.AGG_HDR_LEN, strides=(length, dt.itemsize))


def peek_job(payload: bytes) -> int:
    """The job id of a payload without parsing the rest (to drop other jobs' packets cheaply)."""
    return int(struct.unpack_from("!H", payload, 0)[0]) if len(payload) >= 2 else -1
