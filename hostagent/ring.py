"""Baseline: a host-based ring all-reduce over TCP (reduce-scatter, then all-gather).

This is what in-network aggregation is measured against: each rank sends and receives 2(N-1)/N of the tensor,
in 2(N-1) steps, between the same hosts and over the same fabric as the in-network workers. Rank r listens on
its own address, connects to rank r+1 and accepts rank r-1; a sender thread lets each step send and receive at
the same time, so large segments cannot deadlock on full socket buffers.
"""

from __future__ import annotations

import queue
import socket
import struct
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from hostagent.exceptions import NoRouteError, RingError
from hostagent.validate import check_array

_HELLO = struct.Struct("!I")  # the connecting rank, so the acceptor can check who called


@dataclass
class RingStats:
    calls: int = 0
    bytes_sent: int = 0
    seconds: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


class RingAllReduce:
    """One rank of a TCP ring. Call `listen()` on every rank, share the addresses, then `connect(addresses)`."""

    def __init__(self, rank: int, world_size: int, *, timeout: float = 30.0) -> None:
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in a ring of {world_size}")
        self.rank = rank
        self.world_size = world_size
        self.timeout = timeout
        self.stats = RingStats()
        self._listener: socket.socket | None = None
        self._next: socket.socket | None = None
        self._prev: socket.socket | None = None
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._sender: threading.Thread | None = None
        self._send_error: BaseException | None = None

    # -- setup ---------------------------------------------------------------------------------------------------

    def listen(self, host: str = "127.0.0.1", port: int = 0) -> tuple[str, int]:
        """Bind this rank's listening socket; returns the address the other ranks must use."""
        try:
            self._listener = socket.create_server((host, port), backlog=4)
        except OSError as exc:
            raise NoRouteError(f"rank {self.rank}: cannot listen on {host}:{port}: {exc.strerror}") from None
        addr = self._listener.getsockname()
        return str(addr[0]), int(addr[1])

    def connect(self, addresses: Sequence[tuple[str, int]]) -> None:
        """Connect to the next rank and accept the previous one (both within `timeout`)."""
        if len(addresses) != self.world_size:
            raise ValueError(f"expected {self.world_size} addresses, got {len(addresses)}")
        if self.world_size == 1:
            return
        if self._listener is None:
            self.listen(*addresses[self.rank])
        assert self._listener is not None
        nxt = addresses[(self.rank + 1) % self.world_size]
        deadline = time.monotonic() + self.timeout
        accepted: list[socket.socket] = []
        acceptor = threading.Thread(target=self._accept, args=(accepted, deadline), daemon=True)
        acceptor.start()
        self._next = self._dial(nxt, deadline)
        self._next.sendall(_HELLO.pack(self.rank))
        acceptor.join(max(deadline - time.monotonic(), 0.0) + 1.0)
        if not accepted:
            raise NoRouteError(f"rank {self.rank}: rank {(self.rank - 1) % self.world_size} never connected")
        self._prev = accepted[0]
        self._sender = threading.Thread(target=self._send_loop, name=f"ring-send-{self.rank}", daemon=True)
        self._sender.start()

    def _dial(self, addr: tuple[str, int], deadline: float) -> socket.socket:
        while True:
            try:
                sock = socket.create_connection(addr, timeout=max(deadline - time.monotonic(), 0.1))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(self.timeout)
                return sock
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise NoRouteError(f"rank {self.rank}: cannot reach next rank at {addr[0]}:{addr[1]}: {exc}") from None
                time.sleep(0.05)

    def _accept(self, out: list[socket.socket], deadline: float) -> None:
        assert self._listener is not None
        self._listener.settimeout(max(deadline - time.monotonic(), 0.1))
        try:
            sock, _ = self._listener.accept()
        except OSError:
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(self.timeout)
        (who,) = _HELLO.unpack(_recv_exact(sock, _HELLO.size))
        if who == (self.rank - 1) % self.world_size:
            out.append(sock)
        else:
            sock.close()

    # -- data path -----------------------------------------------------------------------------------------------

    def _send_loop(self) -> None:
        assert self._next is not None
        while True:
            data = self._outbox.get()
            if data is None:
                return
            try:
                self._next.sendall(data)
            except OSError as exc:
                self._send_error = exc
                return

    def _exchange(self, send: npt.NDArray[np.generic], recv_count: int, dtype: np.dtype[np.generic]) -> npt.NDArray[np.generic]:
        if self._send_error is not None:
            raise RingError(f"rank {self.rank}: sending to the next rank failed: {self._send_error}")
        payload = send.tobytes()
        self._outbox.put(payload)
        self.stats.bytes_sent += len(payload)
        assert self._prev is not None
        try:
            raw = _recv_exact(self._prev, recv_count * dtype.itemsize)
        except (OSError, EOFError) as exc:
            raise RingError(f"rank {self.rank}: receiving from the previous rank failed: {exc}") from None
        return np.frombuffer(raw, dtype=dtype)

    def allreduce(self, array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
        """The element-wise sum of `array` over all ranks (same shape and dtype; int32 wraps like the switch)."""
        arr = check_array(array)
        start = time.perf_counter()
        flat = arr.reshape(-1).copy()
        n = self.world_size
        if n > 1 and flat.size:
            bounds = np.linspace(0, flat.size, n + 1).astype(np.int64)
            seg = [(int(bounds[i]), int(bounds[i + 1])) for i in range(n)]
            r = self.rank
            for step in range(n - 1):  # reduce-scatter: rank r ends owning segment r+1
                s_lo, s_hi = seg[(r - step) % n]
                d_lo, d_hi = seg[(r - step - 1) % n]
                got = self._exchange(flat[s_lo:s_hi], d_hi - d_lo, flat.dtype)
                np.add(flat[d_lo:d_hi], got, out=flat[d_lo:d_hi])
            for step in range(n - 1):  # all-gather: pass the reduced segments around once
                s_lo, s_hi = seg[(r + 1 - step) % n]
                d_lo, d_hi = seg[(r - step) % n]
                flat[d_lo:d_hi] = self._exchange(flat[s_lo:s_hi], d_hi - d_lo, flat.dtype)
        self.stats.calls += 1
        self.stats.seconds += time.perf_counter() - start
        return flat.reshape(arr.shape)

    def close(self) -> None:
        """Stop the sender and close every socket; safe to call twice."""
        if self._sender is not None:
            self._outbox.put(None)
            self._sender.join(timeout=5)
            self._sender = None
        for sock in (self._next, self._prev, self._listener):
            if sock is not None:
                sock.close()
        self._next = self._prev = self._listener = None

    def __enter__(self) -> RingAllReduce:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise EOFError(f"connection closed after {got} of {n} bytes")
        got += k
    return bytes(buf)
