"""A frame tunnel: worker processes reach the ports of an embedded switch in another process over loopback UDP.

Without root there are no veth pairs, yet multi-process workers (DDP ranks) must still talk to one switch. Each
datagram carries one whole Ethernet frame behind a 2-byte switch port number; the tunnel injects it on that port and
sends every frame the port emits back to the address that last used it. This is a test and single-machine
convenience: real hosts use `UdpTransport`, Mininet hosts `PacketSocketTransport`.
"""

from __future__ import annotations

import select
import socket
import struct
import threading

from hostagent.exceptions import NoRouteError
from hostagent.transport import Frame, SwitchLike, Transport, udp_payload

_PORT = struct.Struct("!H")


class FrameTunnel:
    """Server side, next to the switch: `FrameTunnel(switch).address` is what the workers dial."""

    def __init__(self, switch: SwitchLike, host: str = "127.0.0.1", port: int = 0) -> None:
        self.switch = switch
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind((host, port))
        self.address: tuple[str, int] = self.sock.getsockname()
        self._peers: dict[int, tuple[str, int]] = {}
        self._stop = threading.Event()
        switch.add_output_callback(self._on_output)
        self._thread = threading.Thread(target=self._serve, name="frame-tunnel", daemon=True)
        self._thread.start()

    def _on_output(self, port: int, frame: bytes) -> None:
        peer = self._peers.get(port)
        if peer is not None and not self._stop.is_set():
            try:
                self.sock.sendto(_PORT.pack(port) + bytes(frame), peer)
            except OSError:
                pass  # the worker went away; like a frame on a dead link

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.sock], [], [], 0.2)
            if not ready:
                continue
            try:
                data, peer = self.sock.recvfrom(65535)
            except OSError:
                return
            if len(data) <= _PORT.size:
                continue
            (port,) = _PORT.unpack_from(data)
            self._peers[port] = peer
            self.switch.inject(port, data[_PORT.size :])

    def close(self) -> None:
        """Stop serving; idempotent."""
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


class TunnelTransport(Transport):
    """Worker side: the host wired to `switch_port`, receiving datagrams sent to `udp_port`."""

    def __init__(self, tunnel: tuple[str, int], *, switch_port: int, udp_port: int) -> None:
        self.prefix = _PORT.pack(switch_port)
        self.udp_port = udp_port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        try:
            self.sock.connect(tunnel)
        except OSError as exc:
            self.sock.close()
            raise NoRouteError(f"no route to the frame tunnel at {tunnel[0]}:{tunnel[1]}: {exc.strerror}") from None

    def send(self, frame: Frame) -> None:
        try:
            self.sock.send(self.prefix + bytes(frame))
        except ConnectionRefusedError:
            pass  # the tunnel is not up (yet): a loss the window's timers recover from, or report as not admitted

    def recv(self, timeout: float) -> bytes | None:
        wait = max(timeout, 0.0)
        while True:
            ready, _, _ = select.select([self.sock], [], [], wait)
            if not ready:
                return None
            try:
                data = self.sock.recv(65535)
            except ConnectionRefusedError:
                return None
            payload = udp_payload(data[_PORT.size :], self.udp_port)
            if payload is not None:
                return payload
            wait = 0.0

    def close(self) -> None:
        self.sock.close()
