"""Switch ports: pcap files (file mode), Linux interfaces through AF_PACKET, and pcap capture of live ports.

pcap reading and writing use scapy's raw pcap classes (no dissection: frames stay bytes).
"""

from __future__ import annotations

import errno
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path

from p4switch.exceptions import SwitchStartError
from pktio.mmsg import BurstSender
from pktio.ring import RxRing, ring_error

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_OUTGOING = 4  # sll_pkttype of frames this host sent: the kernel's copy of our own transmissions
LINKTYPE_ETHERNET = 1
# Big enough for jumbo frames and for GRO-merged frames the kernel may hand to a packet socket.
RECV_BUFFER = 65536 + 256
TX_BATCH = 64  # messages per sendmmsg the burst sender starts with (it grows for a larger burst)


def parse_interface_spec(spec: str) -> tuple[int, str]:
    """`N@NAME` (simple_switch's `-i`) -> (port number, interface or file stem)."""
    port_text, sep, name = spec.partition("@")
    if not sep or not name:
        raise SwitchStartError(f"bad interface {spec!r}: expected PORT@NAME, e.g. 0@veth0")
    try:
        port = int(port_text)
    except ValueError:
        raise SwitchStartError(f"bad interface {spec!r}: port {port_text!r} is not a number") from None
    if not 0 <= port < 511:
        raise SwitchStartError(f"bad interface {spec!r}: port must be in 0..510 (511 is the drop port)")
    return port, name


# ------------------------------------------------------------------------------------------------- pcap files


def read_pcap(path: str | Path) -> list[tuple[float, bytes]]:
    """All frames of a pcap file as `(timestamp, frame)`; a clear error for a missing or broken file."""
    from scapy.utils import RawPcapReader

    try:
        reader = RawPcapReader(str(path))
    except FileNotFoundError:
        raise SwitchStartError(f"missing pcap input {path}") from None
    except Exception as exc:
        raise SwitchStartError(f"cannot read pcap {path}: {exc}") from None
    frames: list[tuple[float, bytes]] = []
    try:
        for data, meta in reader:
            usec = getattr(meta, "usec", 0) or 0
            frames.append((meta.sec + usec / 1e6, bytes(data)))
    except Exception as exc:
        raise SwitchStartError(f"cannot read pcap {path}: {exc}") from None
    finally:
        reader.close()
    return frames


class PcapWriter:
    """A pcap file (Ethernet link type) that exists, with its header, from the moment it is opened."""

    def __init__(self, path: str | Path) -> None:
        from scapy.utils import RawPcapWriter

        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._writer = RawPcapWriter(str(self.path), linktype=LINKTYPE_ETHERNET, sync=False)
            self._writer.write_header(None)
        except OSError as exc:
            raise SwitchStartError(f"cannot write pcap {self.path}: {exc.strerror}") from None

    def write(self, frame: bytes, timestamp: float | None = None) -> None:
        with self._lock:
            if timestamp is None:
                self._writer.write_packet(frame)
            else:
                sec = int(timestamp)
                self._writer.write_packet(frame, sec=sec, usec=round((timestamp - sec) * 1e6))

    def flush(self) -> None:
        with self._lock:
            self._writer.flush()

    def close(self) -> None:
        with self._lock:
            self._writer.close()


class PortCapture:
    """`--pcap DIR`: every frame in and out of each port, to `DIR/<name>_in.pcap` and `DIR/<name>_out.pcap`
    (the names BMv2 uses)."""

    def __init__(self, directory: str | Path, names: dict[int, str]) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise SwitchStartError(f"pcap directory {self.directory} does not exist")
        self._in = {p: PcapWriter(self.directory / f"{n}_in.pcap") for p, n in names.items()}
        self._out = {p: PcapWriter(self.directory / f"{n}_out.pcap") for p, n in names.items()}

    def incoming(self, port: int, frame: bytes) -> None:
        w = self._in.get(port)
        if w is not None:
            w.write(frame)

    def outgoing(self, port: int, frame: bytes) -> None:
        w = self._out.get(port)
        if w is not None:
            w.write(frame)

    def close(self) -> None:
        for w in (*self._in.values(), *self._out.values()):
            w.close()


# ---------------------------------------------------------------------------------------------- AF_PACKET


def interface_exists(name: str) -> bool:
    """Whether `name` exists in the calling thread's network namespace (sysfs shows the mount's, which differs
    for a thread that entered another namespace with setns)."""
    try:
        socket.if_nametoindex(name)
    except OSError:
        return False
    return True


#: `port_io` choices: the mmap ring with sendmmsg, falling back to per-packet calls when the ring cannot be set up
#: ("auto"); the ring or an error ("ring"); one system call per packet, the pre-ring path ("socket").
PORT_IO_MODES = ("auto", "ring", "socket")
RING_IO = "ring"  # `AfPacketPort.io` once a ring is in use
SOCKET_IO = "socket"


class AfPacketPort:
    """A switch port on a Linux interface: a promiscuous AF_PACKET raw socket, polled by the switch's worker.

    Receive: a PACKET_MMAP TPACKET_V2 ring (`pktio.ring`), read without a system call per frame; or, when the ring
    cannot be set up (or `io="socket"`), `recvfrom` per frame. Either way `recv_batch` returns what is waiting
    without blocking (the worker `select`s on `fileno()` when idle), and the kernel's copies of frames we
    transmitted (PACKET_OUTGOING) are skipped, otherwise the switch would see its own output.
    Transmit: `queue` (a list's `append`) + `flush` send a burst with one `sendmmsg` (`pktio.mmsg.BurstSender`; ring
    mode; frames of the thread running a batch), `send` sends one frame at once (any thread; socket mode's only path).
    """

    def __init__(self, port: int, ifname: str, io: str = "auto") -> None:
        if io not in PORT_IO_MODES:
            raise SwitchStartError(f"bad port I/O {io!r}: expected one of {', '.join(PORT_IO_MODES)}")
        self.port = port
        self.ifname = ifname
        if not interface_exists(ifname):
            raise SwitchStartError(f"no such interface: {ifname} (port {port})")
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        except PermissionError:
            raise SwitchStartError(f"opening interface {ifname} needs root (CAP_NET_RAW)") from None
        try:
            sock.bind((ifname, 0))
            ifindex = socket.if_nametoindex(ifname)
            mreq = struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b"")
            sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        except OSError as exc:
            sock.close()
            if exc.errno in (errno.ENODEV, errno.ENXIO):
                raise SwitchStartError(f"no such interface: {ifname} (port {port})") from None
            raise SwitchStartError(f"cannot open interface {ifname}: {exc.strerror}") from None
        self._sock = sock
        self._buf = bytearray(RECV_BUFFER)
        self._view = memoryview(self._buf)
        self._closed = False
        self._ring: RxRing | None = None
        self._tx: BurstSender | None = None
        self.io = SOCKET_IO
        self.fallback_reason: str | None = None  # why "auto" ended up on the socket path
        if io != SOCKET_IO:
            try:
                self._ring = RxRing(sock)
                self._tx = BurstSender(sock, burst=TX_BATCH)
                self.io = RING_IO
            except OSError as exc:
                if self._ring is not None:
                    self._ring.close()
                    self._ring = None
                self.fallback_reason = ring_error(exc)
                if io == RING_IO:
                    sock.close()
                    raise SwitchStartError(f"no packet ring on {ifname}: {self.fallback_reason}") from None
        # `queue(frame)`: add a frame to the burst `flush` sends (the worker thread only); in socket mode, send it
        # now. A list's own `append`, bound once: it runs for every frame the switch sends
        self._burst: list[bytes] = []
        self.queue: Callable[[bytes], None] = self._burst.append if self._tx is not None else self.send
        self.rx_frames = 0
        self.ring_drops = 0
        self._sent = 0  # by `send`; the burst sender counts its own
        self._send_errors = 0

    @property
    def tx_frames(self) -> int:
        return self._sent + (self._tx.sent if self._tx is not None else 0)

    @property
    def tx_errors(self) -> int:
        return self._send_errors + (self._tx.errors if self._tx is not None else 0)

    def fileno(self) -> int:
        return self._sock.fileno()

    def describe(self) -> str:
        """The I/O path for the start-up log."""
        if self.io == RING_IO:
            return "mmap rx ring + sendmmsg"
        if self.fallback_reason:
            return f"recvfrom/send per packet (no ring: {self.fallback_reason})"
        return "recvfrom/send per packet"

    def ready(self) -> bool:
        """False when the ring's next slot is empty, so `recv_batch` would return nothing (one load, no walk, no
        system call); always True on the socket path, which only a `recv` can tell."""
        ring = self._ring
        return ring is None or ring.ready()

    def recv_batch(self, limit: int = 64) -> list[bytes]:
        """Up to `limit` frames already received, without blocking."""
        ring = self._ring
        if ring is not None:
            frames = ring.recv_batch(limit)
            self.rx_frames += len(frames)
            return frames
        frames = []
        sock, buf, view = self._sock, self._buf, self._view
        for _ in range(limit):
            try:
                n, addr = sock.recvfrom_into(buf, 0, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break  # interface went away: nothing to read
            if addr[2] == PACKET_OUTGOING:
                continue
            frames.append(bytes(view[:n]))
        self.rx_frames += len(frames)
        return frames

    def send(self, frame: bytes) -> None:
        """Send one frame now (any thread)."""
        try:
            self._sock.send(frame)
            self._sent += 1
        except OSError:
            self._send_errors += 1  # interface down or frame larger than its MTU: dropped, as on a real port

    def flush(self) -> None:
        """Send the queued burst: one `sendmmsg` (more when the kernel refuses a frame, which is dropped)."""
        burst = self._burst
        if burst and self._tx is not None:
            try:
                self._tx.send(burst)
            finally:
                burst.clear()

    def ring_stats(self) -> dict[str, int]:
        """Frames the ring dropped because it was full (since start), and oversized frames read whole."""
        ring = self._ring
        if ring is None:
            return {}
        _, drops = ring.statistics()
        self.ring_drops += drops
        return {"ring_drops": self.ring_drops, "oversized": ring.copied, "truncated": ring.truncated}

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._ring is not None:
                self._ring.close()
            self._sock.close()
