"""802.1Qbb priority flow control as the MAC of a port sees it: decode a received PFC frame into per-priority
pause times, and build one (for programs and tests that generate them)."""

from __future__ import annotations

import struct

MAC_CONTROL_ETHERTYPE = 0x8808
PFC_OPCODE = 0x0101
PFC_DEST = bytes.fromhex("0180c2000001")
QUANTUM_BITS = 512  # one pause quantum lasts 512 bit times at the link speed


def parse_pfc(frame: bytes) -> dict[int, int] | None:
    """`{priority: quanta}` for every priority whose class-enable bit is set, or None if not a PFC frame."""
    if len(frame) < 34 or frame[12:14] != b"\x88\x08" or frame[14:16] != b"\x01\x01":
        return None
    enable = int.from_bytes(frame[16:18], "big") & 0xFF
    quanta = struct.unpack(">8H", frame[18:34])
    return {prio: quanta[prio] for prio in range(8) if enable >> prio & 1}


def build_pfc(src_mac: bytes, pauses: dict[int, int]) -> bytes:
    """A PFC frame (padded to 60 bytes) pausing each `priority` for `quanta` (0 = resume)."""
    enable = 0
    quanta = [0] * 8
    for prio, q in pauses.items():
        enable |= 1 << prio
        quanta[prio] = q
    frame = PFC_DEST + src_mac + struct.pack(">HHH8H", MAC_CONTROL_ETHERTYPE, PFC_OPCODE, enable, *quanta)
    return frame.ljust(60, b"\x00")


def pause_seconds(quanta: int, link_bps: float) -> float:
    return quanta * QUANTUM_BITS / link_bps
