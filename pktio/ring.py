"""The PACKET_MMAP receive ring (TPACKET_V2) of an AF_PACKET socket, read from Python through `mmap`.

The kernel writes each received frame into the next slot of a ring shared with user space and flips the slot's
status word; reading a frame is a slice of the mapping and a store that hands the slot back, no system call. The
socket stays pollable (`select` reports it readable while a slot is ours), so a worker sleeps on it as on a plain
socket and, awake, drains every slot the kernel filled.

TPACKET_V2 rather than V3: V3 hands over whole blocks, which the kernel retires only when full or after a timeout
of at least a millisecond, so a lone frame would wait that long; libpcap's immediate mode uses V2 for the same
reason. Slots are `frame_size` bytes (jumbo frames fit); a larger frame (a GSO super-frame) is truncated in its
slot, and with PACKET_COPY_THRESH the kernel also queues it whole on the socket, where it is read with one `recv`.
The kernel moves a VLAN tag out of the frame into the slot header; it is put back, so frames arrive as sent.
"""

from __future__ import annotations

import errno
import mmap
import socket
import struct
from collections.abc import Callable

SOL_PACKET = 263
PACKET_RX_RING = 5
PACKET_STATISTICS = 6
PACKET_COPY_THRESH = 7
PACKET_VERSION = 10
PACKET_IGNORE_OUTGOING = 23
TPACKET_V2 = 1
PACKET_OUTGOING = 4

TP_STATUS_USER = 0x1
TP_STATUS_COPY = 0x2
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
_SLOW_STATUS = TP_STATUS_COPY | TP_STATUS_VLAN_VALID  # slots `recv_batch` cannot hand out as a plain slice
_FAST_MASK = TP_STATUS_USER | _SLOW_STATUS  # status & this == TP_STATUS_USER: a filled slot holding a plain frame

# struct tpacket2_hdr: status, len, snaplen (u32), mac, net (u16), sec, nsec (u32), vlan_tci, vlan_tpid (u16), pad;
# the sockaddr_ll follows at TPACKET_ALIGN(32), its sll_pkttype 10 bytes in
_W_STATUS, _W_LEN, _W_SNAPLEN, _W_MAC = 0, 1, 2, 3
_HEADER = struct.Struct("IIIH")  # status, len, snaplen, mac: what the walk reads of every slot
_VLAN_OFFSET = 24
_PKTTYPE_OFFSET = 32 + 10
_HDR_ROOM = 80  # TPACKET_ALIGN(TPACKET2_HDRLEN + 16): where the network header starts in a slot

#: Slot size: a 9000-byte jumbo frame plus a VLAN tag and the slot header fits; six slots fill a 64 KiB block.
DEFAULT_FRAME_SIZE = 10240
DEFAULT_BLOCK_SIZE = 65536
DEFAULT_FRAMES = 516  # 86 blocks, about 5.5 MiB of pinned memory per port


class RxRing:
    """A TPACKET_V2 receive ring on an AF_PACKET socket the caller opened and bound. Raises `OSError` when the
    kernel refuses the ring (the caller falls back to plain `recv`)."""

    def __init__(
        self,
        sock: socket.socket,
        *,
        frame_size: int = DEFAULT_FRAME_SIZE,
        block_size: int = DEFAULT_BLOCK_SIZE,
        frames: int = DEFAULT_FRAMES,
        ignore_outgoing: bool = True,
    ) -> None:
        if frame_size % 16 or block_size % mmap.PAGESIZE or block_size < frame_size:
            raise ValueError("frame_size must be a multiple of 16 and fit a block that is a multiple of the page size")
        per_block = block_size // frame_size
        blocks = -(-frames // per_block)
        frames = blocks * per_block
        self.sock = sock
        self.max_frame = frame_size - _HDR_ROOM + 14  # the MAC header sits 14 bytes before the network header
        sock.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
        # the kernel's copies of our own transmissions never reach the ring (Linux >= 4.20); the pkttype check
        # below covers older kernels
        self.ignores_outgoing = False
        if ignore_outgoing:
            try:
                sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                self.ignores_outgoing = True
            except OSError:
                pass
        sock.setsockopt(SOL_PACKET, PACKET_COPY_THRESH, 1)
        sock.setsockopt(SOL_PACKET, PACKET_RX_RING, struct.pack("IIII", block_size, blocks, frame_size, frames))
        try:
            self._map = mmap.mmap(sock.fileno(), blocks * block_size, mmap.MAP_SHARED,
                                  mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError:
            sock.setsockopt(SOL_PACKET, PACKET_RX_RING, struct.pack("IIII", 0, 0, 0, 0))
            raise
        self._words = memoryview(self._map).cast("I")
        self._offsets = [b * block_size + f * frame_size for b in range(blocks) for f in range(per_block)]
        self._next = 0
        self.frames = frames
        self.memory = blocks * block_size
        self.truncated = 0  # frames cut to their slot that the kernel could not also queue whole
        self.copied = 0  # frames larger than a slot, read whole from the socket

    def fileno(self) -> int:
        return self.sock.fileno()

    def ready(self) -> bool:
        """Whether the next slot holds a frame (or our own transmission, or a slow slot): one load of its status
        word, so a worker can look at many idle ports without walking each ring. False means `recv_batch` would
        return nothing now."""
        return bool(self._words[self._offsets[self._next] >> 2] & TP_STATUS_USER)

    def recv_batch(self, limit: int) -> list[bytes]:
        """Up to `limit` frames from the ring, oldest first, without a system call (except for frames larger
        than a slot). The kernel's copies of our own transmissions are skipped."""
        out: list[bytes] = []
        self._walk(limit, out.append)
        return out

    def discard(self, limit: int) -> int:
        """Hand back up to `limit` filled slots without copying their frames: the number of frames received (own
        transmissions and frames lost to truncation not counted). For a traffic sink that only counts."""
        return self._walk(limit, None)

    def _walk(self, limit: int, append: Callable[[bytes], None] | None) -> int:
        """The one walk over filled slots, for `recv_batch` (each frame to `append`) and `discard` (`append`
        None: counted, never copied): up to `limit` slots handed back to the kernel, oldest first; the number of
        frames found. A slot's header is read with one `unpack_from`, and one mask test tells the common slot
        (ours, the whole frame, no tag to put back, not our own transmission): one slice of the mapping."""
        words, mm, offsets, header = self._words, self._map, self._offsets, _HEADER.unpack_from
        i, n = self._next, len(offsets)
        end = i + min(limit, n)
        slots = offsets[i:end] if end <= n else offsets[i:] + offsets[:end - n]
        # without the kernel's filter every slot may be our own transmission: all take the slow path's check
        common = TP_STATUS_USER if self.ignores_outgoing else -1
        got = taken = 0
        for off in slots:
            status, length, size, mac = header(mm, off)
            if status & _FAST_MASK == common and size == length:
                got += 1
                if append is not None:
                    start = off + mac
                    append(mm[start:start + size])
            elif status & TP_STATUS_USER:
                frame = self._slow_frame(off, off >> 2, status)
                if frame:
                    got += 1
                    if append is not None:
                        append(frame)
            else:
                break  # the kernel's: nothing filled beyond it
            words[off >> 2] = 0  # the slot is the kernel's again
            taken += 1
        self._next = (i + taken) % n
        return got

    def _slow_frame(self, off: int, w: int, status: int) -> bytes:
        """A slot that needs more than a slice: our own transmission (skipped), a frame too large for its slot
        (read whole from the socket, or dropped and counted), a VLAN tag to put back."""
        words, mm = self._words, self._map
        if mm[off + _PKTTYPE_OFFSET] == PACKET_OUTGOING:
            if status & TP_STATUS_COPY:
                self._whole(b"")  # keep the socket queue in step with the ring
            return b""
        mac = words[w + _W_MAC] & 0xFFFF
        frame = mm[off + mac:off + mac + words[w + _W_SNAPLEN]]
        if words[w + _W_LEN] > len(frame):
            if not status & TP_STATUS_COPY:
                self.truncated += 1  # cut to its slot and not queued whole (the socket's buffer was full)
                return b""
            frame = self._whole(frame)
        if status & TP_STATUS_VLAN_VALID and frame:
            frame = self._with_vlan(frame, off, status)
        return frame

    def _whole(self, head: bytes) -> bytes:
        """The full copy of an over-sized frame the kernel queued on the socket (same order as the ring)."""
        try:
            data = self.sock.recv(1 << 17, socket.MSG_DONTWAIT)
        except OSError:
            self.truncated += 1
            return b""
        if data[:len(head)] != head:
            self.truncated += 1  # out of step (the queue was full when the kernel tried): drop, never mix frames
            return b""
        self.copied += 1
        return data

    def _with_vlan(self, frame: bytes, off: int, status: int) -> bytes:
        tci, tpid = struct.unpack_from("HH", self._map, off + _VLAN_OFFSET)
        if not status & TP_STATUS_VLAN_TPID_VALID or not tpid:
            tpid = 0x8100
        return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]

    def statistics(self) -> tuple[int, int]:
        """(frames received, frames dropped because the ring was full) since the last call (the kernel resets)."""
        try:
            packets, drops = struct.unpack("II", self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
        except OSError:
            return 0, 0
        return packets, drops

    def close(self) -> None:
        """Unmap the ring (the socket stays the caller's to close)."""
        if self._map.closed:
            return
        self._words.release()
        try:
            self._map.close()
        except BufferError:  # a view still exported: leave it to the garbage collector
            pass


def ring_error(exc: OSError) -> str:
    """A one-line reason for the start-up log when a ring cannot be set up."""
    if exc.errno == errno.ENOMEM:
        return "not enough locked memory for the ring"
    return exc.strerror or str(exc)
