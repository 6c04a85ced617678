"""`sendmmsg(2)` and `recvmmsg(2)` through ctypes: a burst of datagrams or frames in one system call.

`MmsgSender` and `MmsgReceiver` copy frames into fixed slots of one preallocated buffer whose `iovec`s and
`mmsghdr`s are built once, so a frame costs a `memcpy` and one length store, not a ctypes object. `BurstSender`
takes a whole list of `bytes` at once and does no Python work per frame: on CPython each iovec points straight at
its `bytes` object's own buffer (no copy in user space: for 8 KB jumbo frames the copies were most of the send's
user time), elsewhere the frames are joined into one buffer. Sockets must be connected (UDP) or bound to an
interface (AF_PACKET): messages carry no address.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import socket
import sys
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate, repeat

MSG_DONTWAIT = 0x40
MSG_TRUNC = 0x20


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


class _MsgHdr(ctypes.Structure):
    _fields_ = [
        ("msg_name", ctypes.c_void_p),
        ("msg_namelen", ctypes.c_uint32),
        ("msg_iov", ctypes.c_void_p),
        ("msg_iovlen", ctypes.c_size_t),
        ("msg_control", ctypes.c_void_p),
        ("msg_controllen", ctypes.c_size_t),
        ("msg_flags", ctypes.c_int),
    ]


class _MMsgHdr(ctypes.Structure):
    _fields_ = [("msg_hdr", _MsgHdr), ("msg_len", ctypes.c_uint)]


_IOV_SIZE = ctypes.sizeof(_IoVec)
_MMSG_SIZE = ctypes.sizeof(_MMsgHdr)
_MMSG_WORDS = _MMSG_SIZE // 4
_LEN_WORD = _MMsgHdr.msg_len.offset // 4
_FLAGS_WORD = _MsgHdr.msg_flags.offset // 4  # msg_hdr is the first member of mmsghdr


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.sendmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int]
        libc.sendmmsg.restype = ctypes.c_int
        libc.recvmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_void_p]
        libc.recvmmsg.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def _bytes_data_offset() -> int | None:
    """How far a `bytes` object's data lies from its address (CPython: `id()` is the address and the data,
    `ob_sval`, ends the fixed header, so `getsizeof(b"") - 1` bytes in); checked once on a probe object, None
    where it does not hold (then `BurstSender` joins)."""
    if platform.python_implementation() != "CPython":
        return None
    probe = b"p4ina: where does a bytes object keep its data?"
    offset = sys.getsizeof(b"") - 1
    try:
        if ctypes.string_at(id(probe) + offset, len(probe)) == probe:
            return offset
    except (OSError, ValueError):
        pass
    return None


_BYTES_DATA = _bytes_data_offset()


def available() -> bool:
    """True when the C library has sendmmsg/recvmmsg (glibc >= 2.14 on Linux)."""
    return _LIBC is not None


def _send_msgs(fd: int, first_msg: int, n: int) -> tuple[int, int, int, int]:
    """`sendmmsg` until all `n` messages from address `first_msg` are sent or refused: (accepted, refused,
    calls, errno of the last refusal or 0). A refused message (interface down, over the MTU, no buffer) is
    skipped, as a real port drops that frame, and the rest still go."""
    assert _LIBC is not None
    start = ok = refused = calls = last = 0
    while start < n:
        r = _LIBC.sendmmsg(fd, first_msg + start * _MMSG_SIZE, n - start, 0)
        calls += 1
        if r < 0:
            err = ctypes.get_errno()
            if err == errno.EINTR:
                continue
            refused += 1
            last = err
            start += 1  # the first message failed: skip it and send the rest
            continue
        ok += r
        start += r
    return ok, refused, calls, last


class _Slots:
    """`count` buffers of `size` bytes, each with its iovec and mmsghdr, laid out once."""

    def __init__(self, count: int, size: int) -> None:
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "sendmmsg/recvmmsg not available in this C library")
        self.count, self.size = count, size
        self.buf = (ctypes.c_char * (count * size))()
        self.view = memoryview(self.buf).cast("B")
        self.iovs = (_IoVec * count)()
        self.msgs = (_MMsgHdr * count)()
        base = ctypes.addressof(self.buf)
        for i in range(count):
            self.iovs[i].iov_base = base + i * size
            self.iovs[i].iov_len = size
            self.msgs[i].msg_hdr.msg_iov = ctypes.addressof(self.iovs[i])
            self.msgs[i].msg_hdr.msg_iovlen = 1
        # raw views for per-packet stores and loads without ctypes objects: iov_len is the 2nd size_t of an iovec
        self.iov_words = memoryview(self.iovs).cast("B").cast("Q")
        # msg_len and msg_flags of message i, as 32-bit words: msg_words[i * _MMSG_WORDS + _LEN_WORD]
        self.msg_words = memoryview(self.msgs).cast("B").cast("I")

    def msg_ptr(self, index: int) -> int:
        return ctypes.addressof(self.msgs) + index * _MMSG_SIZE


class MmsgSender:
    """Queues frames and sends them with as few `sendmmsg` calls as the slots allow.

    `add` copies a frame into the next slot (a frame larger than a slot is sent on its own with `send`); `flush`
    sends what is queued. A message the kernel refuses (interface down, frame over the MTU) is counted in `errors`
    and skipped, as a real port drops it; the rest of the burst still goes.
    """

    def __init__(self, sock: socket.socket, *, slots: int = 64, slot_size: int = 16384) -> None:
        self.sock = sock
        self._s = _Slots(slots, slot_size)
        self._n = 0
        self.sent = 0
        self.errors = 0
        self.last_errno = 0  # of the last refused message (0: none since `flush` began)
        self.calls = 0

    @property
    def pending(self) -> int:
        return self._n

    def add(self, frame: bytes | bytearray | memoryview) -> None:
        s = self._s
        size = len(frame)
        if size > s.size:
            self.flush()
            try:
                self.sock.send(frame)
                self.sent += 1
            except OSError as exc:
                self.errors += 1
                self.last_errno = exc.errno or 0
            self.calls += 1
            return
        n = self._n
        off = n * s.size
        s.view[off:off + size] = frame
        s.iov_words[2 * n + 1] = size
        self._n = n + 1
        if n + 1 == s.count:
            self.flush()

    def add_all(self, frames: Iterable[bytes | bytearray | memoryview]) -> None:
        for frame in frames:
            self.add(frame)

    def flush(self) -> int:
        """Send everything queued; the number of frames the kernel accepted."""
        n = self._n
        if not n:
            return 0
        self._n = 0
        ok, refused, calls, self.last_errno = _send_msgs(self.sock.fileno(), self._s.msg_ptr(0), n)
        self.sent += ok
        self.errors += refused
        self.calls += calls
        return ok


class BurstSender:
    """Sends a list of frames with as few `sendmmsg` calls as possible and no Python work per frame. With
    `zero_copy` (CPython, the default there) each message's iovec points at its `bytes` object's own data: the
    addresses and lengths are computed by `map`s and stored by two strided stores, and the kernel copies from the
    objects themselves (the caller's list keeps them alive for the call). Otherwise, or for a burst holding other
    buffer types, the frames are joined into one buffer (one copy) and the iovecs point into it. For a caller that
    collects `bytes` in a list anyway (the switch's ports: `list.append` per frame, a C-level call). Counts as
    `MmsgSender` does."""

    def __init__(self, sock: socket.socket, *, burst: int = 64, buffer: int = 1 << 16,
                 zero_copy: bool = True) -> None:
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "sendmmsg not available in this C library")
        self.sock = sock
        self.sent = 0
        self.errors = 0
        self.last_errno = 0
        self.calls = 0
        self.zero_copy = zero_copy and _BYTES_DATA is not None
        self._data_at = (_BYTES_DATA or 0).__add__  # id(frame) -> address of its data
        self._size = 0
        self._grow(burst, buffer)

    def _grow(self, count: int, nbytes: int) -> None:
        """Room for `count` messages and `nbytes` of joined frames; one iovec per message, set up once."""
        self._count, self._size = count, nbytes
        self._buf = (ctypes.c_char * nbytes)()
        self._view = memoryview(self._buf).cast("B")
        self._base = ctypes.addressof(self._buf)
        self._iovs = (_IoVec * count)()
        self._msgs = (_MMsgHdr * count)()
        for i in range(count):
            self._msgs[i].msg_hdr.msg_iov = ctypes.addressof(self._iovs[i])
            self._msgs[i].msg_hdr.msg_iovlen = 1
        self._iov_words = memoryview(self._iovs).cast("B").cast("Q")  # base, length, base, length, ...
        self._first = ctypes.addressof(self._msgs)

    def send(self, frames: Sequence[bytes]) -> int:
        """Send `frames` in order; the number the kernel accepted (the refused are counted in `errors`)."""
        n = len(frames)
        if not n:
            return 0
        lengths = array("Q", map(len, frames))
        if self.zero_copy and all(map(isinstance, frames, repeat(bytes))):
            if n > self._count:
                self._grow(n, self._size)
            words = self._iov_words
            words[0:2 * n:2] = array("Q", map(self._data_at, map(id, frames)))
        else:
            data = b"".join(frames)
            if n > self._count or len(data) > self._size:
                self._grow(max(n, self._count), max(len(data), self._size))
            self._view[:len(data)] = data
            words = self._iov_words
            words[0:2 * n:2] = array("Q", accumulate(lengths, initial=self._base))[:n]
        words[1:2 * n:2] = lengths
        ok, refused, calls, self.last_errno = _send_msgs(self.sock.fileno(), self._first, n)
        self.sent += ok
        self.errors += refused
        self.calls += calls
        return ok


class MmsgReceiver:
    """Drains a socket with `recvmmsg(MSG_DONTWAIT)`: everything waiting, up to `slots` per call."""

    def __init__(self, sock: socket.socket, *, slots: int = 64, slot_size: int = 65536) -> None:
        self.sock = sock
        self._s = _Slots(slots, slot_size)
        self.truncated = 0
        self.calls = 0

    def recv_batch(self, limit: int | None = None) -> list[bytes]:
        """The datagrams already waiting (at most `limit`, default one call's worth), without blocking."""
        assert _LIBC is not None
        s = self._s
        want = s.count if limit is None else min(limit, s.count)
        fd = self.sock.fileno()
        while True:
            r = _LIBC.recvmmsg(fd, s.msg_ptr(0), want, MSG_DONTWAIT, None)
            self.calls += 1
            if r >= 0:
                break
            err = ctypes.get_errno()
            if err == errno.EINTR:
                continue
            if err in (errno.EAGAIN, errno.EWOULDBLOCK):
                return []
            if err == errno.ECONNREFUSED:  # an ICMP error for an earlier datagram: nothing to read now
                return []
            raise OSError(err, os.strerror(err))
        out: list[bytes] = []
        view, size, words = s.view, s.size, s.msg_words
        for i in range(r):
            w = i * _MMSG_WORDS
            if words[w + _FLAGS_WORD] & MSG_TRUNC:
                self.truncated += 1
                continue
            off = i * size
            out.append(bytes(view[off:off + words[w + _LEN_WORD]]))
        return out
