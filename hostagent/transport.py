"""How a worker's packets reach the switch: one small interface, three ways to carry it.

A worker always hands a transport a complete Ethernet frame (built from its template) and always gets back the UDP
payload (aggregation header onward) of frames addressed to the aggregation port. So the worker is identical
whether packets go through the kernel (`UdpTransport`, real hosts), straight onto a link (`PacketSocketTransport`,
AF_PACKET in a Mininet namespace, no ARP needed) or into an embedded switch in the same process
(`SwitchPortTransport`, for tests and single-machine runs).

Batching (issue 17): the kernel transports move bursts, not packets. `send_later` queues a frame; the queue leaves
with one `sendmmsg` when the worker next calls `recv` with nothing already received (so before it could block),
when it holds 64 frames, or on `flush`. `recv` drains everything waiting in one `recvmmsg` (UDP) or from an mmap
ring (AF_PACKET) and hands the payloads out one by one; `recv_many` hands out the whole burst at once (what a
worker uses: it checks and stores a burst with a few numpy calls). The wire protocol and the worker's window are
unchanged; `batched=False` restores one system call per packet (the comparison in `bench/hostagent_io.py`).
Issue 18: over UDP a burst of one or two datagrams (what a worker paced by its switch mostly has) goes one plain
`send`/`recv` each, which costs less user CPU than a ctypes `sendmmsg`/`recvmmsg` call; longer bursts still go
in one call, the queued payloads sent from their own `bytes` (`pktio.mmsg.BurstSender`, no second copy).
"""

from __future__ import annotations

import errno
import os
import queue
import select
import socket
import struct
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt

from hostagent.exceptions import NoRouteError
from hostagent.protocol import AGG_PORT
from pktio import mmsg
from pktio.mmsg import BurstSender, MmsgReceiver, MmsgSender
from pktio.ring import RxRing

ETH_LEN, IPV4_LEN, UDP_LEN = 14, 20, 8
#: Offset of the UDP payload in an untagged Ethernet/IPv4 (no options)/UDP frame.
L4_PAYLOAD = ETH_LEN + IPV4_LEN + UDP_LEN
_ETH_P_ALL = 0x0003
_RX_SLOTS = 64  # datagrams per recvmmsg
_MAX_BURST = 1024  # payloads `recv_many` hands out at most at once
_TX_BURST = 64  # queued datagrams that leave at once without waiting for `flush`
#: Bursts of at most this many datagrams go one `send`/`recv` each: a worker paced by its switch mostly wakes to
#: one RESULT and sends one chunk, and a ctypes sendmmsg/recvmmsg call costs more user CPU than a plain system
#: call (UDP loopback, one 8 KB datagram per wake-up: ~20 against ~45 us user per packet, docs/performance.md).
_SMALL_BURST = 2

#: What `Transport.send` takes: any buffer holding one whole frame (a row of the worker's frame array, or bytes).
Frame = bytes | bytearray | memoryview | npt.NDArray[np.uint8]


def frame_view(frame: Frame) -> memoryview:
    """A zero-copy byte view of a frame, whatever buffer holds it."""
    return frame.data if isinstance(frame, np.ndarray) else memoryview(frame)


def udp_payload(frame: bytes, port: int) -> bytes | None:
    """The UDP payload of `frame` when it is IPv4/UDP to `port` (no IP options), else None. Cheap byte checks only."""
    if len(frame) < L4_PAYLOAD or frame[12:14] != b"\x08\x00" or frame[23] != 17 or frame[14] & 0x0F != 5:
        return None
    if struct.unpack_from("!H", frame, ETH_LEN + IPV4_LEN + 2)[0] != port:
        return None
    return frame[L4_PAYLOAD:]


class Transport(ABC):
    """Sends whole frames, receives UDP payloads addressed to the aggregation port."""

    @abstractmethod
    def send(self, frame: Frame) -> None:
        """Put one frame on the wire now."""

    def send_later(self, frame: Frame) -> None:
        """Queue a frame for the next burst: it leaves at the latest when `recv` would wait, or on `flush`.
        Transports without bursts send at once."""
        self.send(frame)

    def flush(self) -> None:  # noqa: B027 - nothing is ever queued by transports without bursts
        """Send what `send_later` queued."""

    @abstractmethod
    def recv(self, timeout: float) -> bytes | None:
        """The next payload, or None when nothing arrived within `timeout` seconds."""

    def recv_many(self, timeout: float) -> list[bytes]:
        """Every payload already waiting, or, when none is, those of the first wake-up within `timeout` seconds
        (empty: nothing came). A worker handles them as one burst. Transports without bursts give one."""
        payload = self.recv(timeout)
        return [] if payload is None else [payload]

    def close(self) -> None:  # noqa: B027 - optional for transports without resources
        """Release sockets; idempotent."""

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class UdpTransport(Transport):
    """Through the kernel's UDP stack: DATA goes to `switch_addr`:`agg_port` from `local_port`, where RESULTs
    come back (the worker's `Endpoints.udp_port`)."""

    def __init__(self, switch_addr: str, *, local_port: int, bind_addr: str = "0.0.0.0", agg_port: int = AGG_PORT,
                 batched: bool = True) -> None:
        self.dest = (switch_addr, agg_port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        try:
            self.sock.bind((bind_addr, local_port))
            self.sock.connect(self.dest)
        except OSError as exc:
            self.sock.close()
            raise NoRouteError(f"no route to the switch at {switch_addr}:{agg_port}: {exc.strerror}") from None
        batched = batched and mmsg.available()
        # Queued payloads are copied when queued (the bytes queued are the bytes sent) and leave in one sendmmsg
        # whose iovecs point at them (`BurstSender`); a burst of at most `_SMALL_BURST` goes one `send` each.
        self._tx = BurstSender(self.sock, burst=_TX_BURST) if batched else None
        self._queue: list[bytes] = []
        self._rx = MmsgReceiver(self.sock, slots=_RX_SLOTS, slot_size=65536) if batched else None
        self._inbox: deque[bytes] = deque()

    def send(self, frame: Frame) -> None:
        self._send_payload(frame_view(frame)[L4_PAYLOAD:])

    def _send_payload(self, payload: bytes | memoryview) -> None:
        try:
            self.sock.send(payload)
        except ConnectionRefusedError:
            pass  # an ICMP error for an earlier datagram; the window's timers recover like from a loss
        except OSError as exc:
            raise NoRouteError(f"cannot send to the switch at {self.dest[0]}:{self.dest[1]}: {exc.strerror}") from None

    def send_later(self, frame: Frame) -> None:
        if self._tx is None:
            self.send(frame)
            return
        queue = self._queue
        queue.append(bytes(frame_view(frame)[L4_PAYLOAD:]))
        if len(queue) >= _TX_BURST:
            self.flush()

    def flush(self) -> None:
        """As `send`: a refused datagram (an ICMP error for an earlier one) is a loss the window's timers
        recover from; any other error means there is no route."""
        queue = self._queue
        if not queue:
            return
        self._queue = []
        if len(queue) <= _SMALL_BURST or self._tx is None:
            for payload in queue:
                self._send_payload(payload)
            return
        self._tx.send(queue)
        err = self._tx.last_errno
        if err and err != errno.ECONNREFUSED:
            raise NoRouteError(f"cannot send to the switch at {self.dest[0]}:{self.dest[1]}: {os.strerror(err)}")

    def _drain(self) -> list[bytes]:
        """Every datagram waiting, without blocking: the first `_SMALL_BURST` with plain `recv`, the rest (if any)
        with `recvmmsg`, a call per `_RX_SLOTS`, up to `_MAX_BURST`."""
        assert self._rx is not None
        out: list[bytes] = []
        recv = self.sock.recv
        for _ in range(_SMALL_BURST):
            try:
                out.append(recv(65536, socket.MSG_DONTWAIT))
            except (BlockingIOError, ConnectionRefusedError):  # nothing (more) waiting, or an ICMP error: as recvmmsg
                return out
        while len(out) < _MAX_BURST:
            got = self._rx.recv_batch()
            out.extend(got)
            if len(got) < _RX_SLOTS:
                break
        return out

    def recv(self, timeout: float) -> bytes | None:
        if self._inbox:
            return self._inbox.popleft()
        self.flush()
        ready, _, _ = select.select([self.sock], [], [], max(timeout, 0.0))
        if not ready:
            return None
        if self._rx is None:
            try:
                return self.sock.recv(65535)
            except ConnectionRefusedError:
                return None
        self._inbox.extend(self._drain())
        return self._inbox.popleft() if self._inbox else None

    def recv_many(self, timeout: float) -> list[bytes]:
        if self._rx is None:
            return super().recv_many(timeout)
        out = list(self._inbox)
        self._inbox.clear()
        if not out:
            self.flush()
            if not select.select([self.sock], [], [], max(timeout, 0.0))[0]:
                return out
        out.extend(self._drain())  # what came meanwhile joins this burst
        return out

    def close(self) -> None:
        self.sock.close()


class PacketSocketTransport(Transport):
    """Raw frames on a Linux interface (AF_PACKET): the template's MAC/IP headers go out exactly as built; frames
    to UDP port `udp_port` (the worker's `Endpoints.udp_port`) come back. Needs CAP_NET_RAW."""

    def __init__(self, interface: str, udp_port: int, *, batched: bool = True) -> None:
        self.port = udp_port
        try:
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
            self.sock.bind((interface, 0))
        except OSError as exc:
            raise NoRouteError(f"cannot open interface {interface!r}: {exc.strerror}") from None
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self._ring: RxRing | None = None
        self._tx: MmsgSender | None = None
        if batched and mmsg.available():
            try:
                self._ring = RxRing(self.sock, frames=1026)  # 10.5 MiB: the only buffer while the worker computes
            except OSError:
                self._ring = None  # no ring (locked memory, old kernel): one recvfrom per frame, as before
            self._tx = MmsgSender(self.sock, slots=64, slot_size=16384)
        self._inbox: deque[bytes] = deque()

    def send(self, frame: Frame) -> None:
        self.sock.send(frame_view(frame))

    def send_later(self, frame: Frame) -> None:
        if self._tx is None:
            self.send(frame)
        else:
            self._tx.add(frame_view(frame))

    def flush(self) -> None:
        if self._tx is not None:
            self._tx.flush()

    def recv(self, timeout: float) -> bytes | None:
        if self._inbox:
            return self._inbox.popleft()
        self.flush()
        ring = self._ring
        if ring is not None:
            deadline = time.monotonic() + max(timeout, 0.0)
            while True:
                frames = ring.recv_batch(512)
                if frames:
                    port = self.port
                    for frame in frames:
                        payload = udp_payload(frame, port)
                        if payload is not None:
                            self._inbox.append(payload)
                    if self._inbox:
                        return self._inbox.popleft()
                    continue
                if not select.select([ring], [], [], max(deadline - time.monotonic(), 0.0))[0]:
                    return None
        ready, _, _ = select.select([self.sock], [], [], max(timeout, 0.0))
        while ready:
            frame, addr = self.sock.recvfrom(65535)
            if addr[2] != socket.PACKET_OUTGOING:
                payload = udp_payload(frame, self.port)
                if payload is not None:
                    return payload
            ready, _, _ = select.select([self.sock], [], [], 0.0)
        return None

    def recv_many(self, timeout: float) -> list[bytes]:
        first = self.recv(timeout)  # waits, and drains the ring into the inbox
        if first is None:
            return []
        out = [first, *self._inbox]
        self._inbox.clear()
        return out

    def close(self) -> None:
        if self._ring is not None:
            self._ring.close()
            self._ring = None
        self.sock.close()


class SwitchLike(Protocol):
    """What an in-process switch offers (p4switch's `Switch` does): no import of the target needed here."""

    def inject(self, port: int, frame: bytes) -> object: ...

    def add_output_callback(self, fn: Callable[[int, bytes], None]) -> object: ...


class SwitchPorts:
    """Connects in-process workers to the ports of one embedded switch: frames a port emits land in its queue."""

    def __init__(self, switch: SwitchLike) -> None:
        self.switch = switch
        self._queues: dict[int, queue.Queue[bytes]] = {}
        self._lock = threading.Lock()
        switch.add_output_callback(self._on_output)

    def _on_output(self, port: int, frame: bytes) -> None:
        q = self._queues.get(port)
        if q is not None:
            q.put(bytes(frame))

    def attach(self, port: int, udp_port: int) -> SwitchPortTransport:
        """A transport for the host wired to `port`, receiving the UDP datagrams sent to `udp_port`."""
        if port in self._queues:
            raise ValueError(f"switch port {port} already has a host")
        self._queues[port] = queue.Queue()
        return SwitchPortTransport(self, port, udp_port)

    def inject(self, port: int, frame: bytes) -> None:
        with self._lock:  # worker threads share one switch; its ingress is entered by one of them at a time
            self.switch.inject(port, frame)


class SwitchPortTransport(Transport):
    """One host's link to a `SwitchPorts` switch port."""

    def __init__(self, ports: SwitchPorts, port: int, udp_port: int) -> None:
        self.ports = ports
        self.port = port
        self.udp_port = udp_port
        self._queue = ports._queues[port]

    def send(self, frame: Frame) -> None:
        self.ports.inject(self.port, bytes(frame))

    def recv(self, timeout: float) -> bytes | None:
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            try:
                frame = self._queue.get(timeout=max(deadline - time.monotonic(), 1e-6))
            except queue.Empty:
                return None
            payload = udp_payload(frame, self.udp_port)
            if payload is not None:
                return payload

    def recv_many(self, timeout: float) -> list[bytes]:
        first = self.recv(timeout)
        if first is None:
            return []
        out = [first]
        while len(out) < _MAX_BURST:
            try:
                frame = self._queue.get_nowait()
            except queue.Empty:
                break
            payload = udp_payload(frame, self.udp_port)
            if payload is not None:
                out.append(payload)
        return out
