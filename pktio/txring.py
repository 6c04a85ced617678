"""The PACKET_MMAP transmit ring (TPACKET_V2) of an AF_PACKET socket: a burst of frames with one `send`.

Frames are written into slots of a ring shared with the kernel and marked "send request"; one `send(fd, NULL, 0)`
then has the kernel transmit every marked slot, without the per-message work of `sendmmsg` (a msghdr and iovec to
copy in and check per frame). Measured on a veth pair whose peer drains a receive ring: about 2.5-3.2 us of sender
CPU per 60-byte frame against 3.8-4.2 us with `sendmmsg` (docs/performance.md).

The ring lives on its own socket, bound with protocol 0 so it receives nothing. No PACKET_QDISC_BYPASS: the fabric
shapes and impairs links with tc on these very interfaces, and a bypass would skip their qdiscs. PACKET_LOSS is set,
so the kernel skips a frame it refuses (over the MTU) instead of stopping the ring at it; such frames are counted in
`errors` from the bytes `send` reports. A slot is reused only once the kernel has handed it back; when the socket's
send buffer is full the flush blocks until there is room, as `sendmmsg` on a blocking socket does.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import mmap
import socket
import struct
import time

SOL_PACKET = 263
PACKET_VERSION = 10
PACKET_TX_RING = 13
PACKET_LOSS = 14
TPACKET_V2 = 1
MSG_DONTWAIT = 0x40
SIOCGIFMTU = 0x8921

TP_STATUS_AVAILABLE = 0
TP_STATUS_SEND_REQUEST = 1
#: where a TPACKET_V2 transmit slot's frame starts: TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)
DATA_OFFSET = 32
_W_LEN = 1  # tp_len, the second 32-bit word of struct tpacket2_hdr

DEFAULT_FRAME_SIZE = 10240  # a 9000-byte jumbo frame plus a VLAN tag fits, six slots per 64 KiB block
DEFAULT_BLOCK_SIZE = 65536
DEFAULT_FRAMES = 192  # 32 blocks, 2 MiB per port
RECLAIM_WAIT = 1.0  # seconds to wait for the kernel to hand back a slot before dropping the frame
_MAX_SENDS = 1000  # send calls per flush before giving up on frames the kernel does not take


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.send.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.send.restype = ctypes.c_ssize_t
    return libc


_LIBC = _libc()


class TxRing:
    """A TPACKET_V2 transmit ring on an AF_PACKET socket the caller opened and bound (protocol 0). `add` queues a
    frame, `flush` sends what is queued; a full batch flushes itself. A frame larger than a slot goes out with
    `send` on `oversize`, a plain socket on the same interface (a socket with a transmit ring sends only from the
    ring: `send` on it ignores its argument), after what is queued; without one it is dropped and counted. Raises
    `OSError` when the kernel refuses the ring (the caller falls back to `sendmmsg`)."""

    def __init__(
        self,
        sock: socket.socket,
        *,
        frame_size: int = DEFAULT_FRAME_SIZE,
        block_size: int = DEFAULT_BLOCK_SIZE,
        frames: int = DEFAULT_FRAMES,
        batch: int = 64,
        oversize: socket.socket | None = None,
    ) -> None:
        if frame_size % 16 or block_size % mmap.PAGESIZE or block_size < frame_size:
            raise ValueError("frame_size must be a multiple of 16 and fit a block that is a multiple of the page size")
        per_block = block_size // frame_size
        blocks = -(-frames // per_block)
        frames = blocks * per_block
        if not 0 < batch < frames:
            raise ValueError("batch must be smaller than the ring")
        self.sock = sock
        self.oversize = oversize
        sock.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
        sock.setsockopt(SOL_PACKET, PACKET_LOSS, 1)
        sock.setsockopt(SOL_PACKET, PACKET_TX_RING, struct.pack("IIII", block_size, blocks, frame_size, frames))
        try:
            self._map = mmap.mmap(sock.fileno(), blocks * block_size, mmap.MAP_SHARED,
                                  mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError:
            sock.setsockopt(SOL_PACKET, PACKET_TX_RING, struct.pack("IIII", 0, 0, 0, 0))
            raise
        self._words = memoryview(self._map).cast("I")
        self._offsets = [b * block_size + f * frame_size for b in range(blocks) for f in range(per_block)]
        self._next = 0
        self._lens: list[int] = []  # of the frames queued since the last flush, in ring order from `_first`
        self._first = 0
        self._dropped = 0  # by the last `_drop_unsent`
        self.batch = batch
        self.frames = frames
        self.memory = blocks * block_size
        self.max_frame = frame_size - DATA_OFFSET
        self.sent = 0
        self.errors = 0
        self.last_errno = 0
        self.calls = 0

    @property
    def pending(self) -> int:
        return len(self._lens)

    def add(self, frame: bytes | bytearray | memoryview) -> None:
        """Queue one frame (a frame larger than a slot is sent on its own with `send`, after what is queued)."""
        size = len(frame)
        if size > self.max_frame:
            self.flush()
            if self.oversize is None:
                self.errors += 1
                return
            self.calls += 1
            try:
                self.oversize.send(frame)
                self.sent += 1
            except OSError as exc:
                self.errors += 1
                self.last_errno = exc.errno or 0
            return
        i = self._next
        off = self._offsets[i]
        w = off >> 2
        words = self._words
        if words[w] != TP_STATUS_AVAILABLE:
            self.flush()
            if not self._reclaim(w):
                self.errors += 1  # the kernel still holds every slot: the port is saturated, drop as a NIC would
                return
        self._map[off + DATA_OFFSET:off + DATA_OFFSET + size] = frame
        words[w + _W_LEN] = size
        words[w] = TP_STATUS_SEND_REQUEST
        lens = self._lens
        if not lens:
            self._first = i
        lens.append(size)
        i += 1
        self._next = 0 if i == self.frames else i
        if len(lens) >= self.batch:
            self.flush()

    def flush(self) -> int:
        """Have the kernel send every queued frame; the number it accepted."""
        lens = self._lens
        if not lens:
            return 0
        fd = self.sock.fileno()
        sent_bytes = 0
        flags = MSG_DONTWAIT
        self.last_errno = 0
        for _ in range(_MAX_SENDS):
            r = _LIBC.send(fd, None, 0, flags)
            self.calls += 1
            if r >= 0:
                sent_bytes += r
                if self._words[self._offsets[self._last()] >> 2] != TP_STATUS_SEND_REQUEST:
                    break
                flags = 0  # the send buffer is full: wait for room, as a blocking sendmmsg would
                continue
            err = ctypes.get_errno()
            if err == errno.EINTR:
                continue
            if err in (errno.EAGAIN, errno.ENOBUFS) and flags:
                flags = 0
                continue
            self.last_errno = err
            self._drop_unsent()  # interface down or gone: what the kernel did not take is lost, as on a wire
            break
        else:
            self.last_errno = errno.EAGAIN
            self._drop_unsent()  # no progress in that many calls: give the slots back rather than hang
        count = len(lens)
        refused = self._refused(lens, sent_bytes) if sent_bytes < sum(lens) and not self.last_errno else 0
        self.errors += refused
        dropped, self._dropped = self._dropped, 0
        self.sent += count - refused - dropped
        self._lens = []
        return count - refused - dropped

    def _last(self) -> int:
        return (self._first + len(self._lens) - 1) % self.frames

    def _drop_unsent(self) -> None:
        """Take back the slots still marked for sending and rewind to the first of them: the kernel's position in
        the ring stays at the oldest frame it has not taken, so the next frame must go there."""
        words, offsets = self._words, self._offsets
        first_unsent = None
        for k in range(len(self._lens)):
            i = (self._first + k) % self.frames
            w = offsets[i] >> 2
            if words[w] == TP_STATUS_SEND_REQUEST:
                words[w] = TP_STATUS_AVAILABLE
                self._dropped += 1
                if first_unsent is None:
                    first_unsent = i
        if first_unsent is not None:
            self._next = first_unsent
        self.errors += self._dropped

    def _refused(self, lens: list[int], sent_bytes: int) -> int:
        """How many frames the kernel skipped (PACKET_LOSS): the ones over the interface's MTU, when that explains
        the bytes missing from `send`'s count; at least one."""
        limit = None
        try:
            name = self.sock.getsockname()[0]
            req = fcntl.ioctl(self.sock.fileno(), SIOCGIFMTU, struct.pack("16si", name.encode(), 0))
            limit = struct.unpack("16si", req)[1] + 14
        except (OSError, IndexError):
            pass
        if limit is not None:
            over = [n for n in lens if n > limit + 4]  # a VLAN-tagged frame may carry 4 bytes more
            if over and sum(lens) - sum(over) == sent_bytes:
                return len(over)
            over = [n for n in lens if n > limit]
            if over and sum(lens) - sum(over) == sent_bytes:
                return len(over)
        return 1

    def _reclaim(self, w: int) -> bool:
        """Wait until slot word `w` is free: the kernel hands a slot back when its frame has left (a qdisc that
        shapes the link may hold it a while). False after `RECLAIM_WAIT` seconds."""
        words = self._words
        deadline = time.monotonic() + RECLAIM_WAIT
        while words[w] != TP_STATUS_AVAILABLE:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0002)
        return True

    def close(self) -> None:
        """Unmap the ring (the socket stays the caller's to close)."""
        if self._map.closed:
            return
        self._words.release()
        try:
            self._map.close()
        except BufferError:  # a view still exported: leave it to the garbage collector
            pass
