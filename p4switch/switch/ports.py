"""Switch ports: pcap files (file mode), Linux interfaces through AF_PACKET, and pcap capture of live ports.

pcap reading and writing use scapy's raw pcap classes (no dissection: frames stay bytes).
"""

from __future__ import annotations

import errno
import os
import socket
import struct
import threading
from pathlib import Path

from p4switch.exceptions import SwitchStartError

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_OUTGOING = 4  # sll_pkttype of frames this host sent: the kernel's copy of our own transmissions
LINKTYPE_ETHERNET = 1
# Big enough for jumbo frames and for GRO-merged frames the kernel may hand to a packet socket.
RECV_BUFFER = 65536 + 256


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
    return os.path.exists(f"/sys/class/net/{name}")


class AfPacketPort:
    """A switch port on a Linux interface: a promiscuous AF_PACKET raw socket, polled by the switch's worker.

    `recv_batch` returns the frames waiting on the socket without blocking (the worker `select`s on `fileno()`
    when it is idle), so no thread competes with the pipeline for the GIL. The kernel's copies of frames we
    transmitted (PACKET_OUTGOING) are skipped, otherwise the switch would see its own output.
    """

    def __init__(self, port: int, ifname: str) -> None:
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
        self.rx_frames = 0
        self.tx_frames = 0
        self.tx_errors = 0

    def fileno(self) -> int:
        return self._sock.fileno()

    def recv_batch(self, limit: int = 64) -> list[bytes]:
        """Up to `limit` frames already received, without blocking."""
        frames: list[bytes] = []
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
        try:
            self._sock.send(frame)
            self.tx_frames += 1
        except OSError:
            self.tx_errors += 1  # interface down or frame larger than its MTU: dropped, as on a real port

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._sock.close()
