"""pktio.txring against the kernel: the TPACKET_V2 transmit ring on a veth pair in a namespace the test creates and
removes. The receiving side is a plain per-packet socket, independent of the code under test; the expected frames
are the ones queued, in order, minus exactly the ones Linux refuses (over the MTU) or cannot send (interface down).
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator

import pytest

from pktio.netns import entered
from pktio.txring import TxRing

pytestmark = pytest.mark.root

ETH_P_ALL = 0x0003


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=30)


@pytest.fixture
def veth() -> Iterator[str]:
    if os.geteuid() != 0:  # the suite runs as root (docs/testing.md): not being root fails, never skips
        pytest.fail("needs root for a network namespace")
    ns = f"p4ina-txr{os.getpid()}"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    sh("ip", "netns", "add", ns)
    try:
        for key in ("all", "default"):
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        sh("ip", "-n", ns, "link", "add", "t0", "type", "veth", "peer", "name", "t1")
        for end in ("t0", "t1"):
            sh("ip", "-n", ns, "link", "set", end, "mtu", "16000", "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def sockets(ns: str) -> tuple[socket.socket, socket.socket]:
    """(transmit socket on t0, protocol 0; receive socket on t1, every protocol)."""
    with entered(ns):
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        tx.bind(("t0", 0))
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        rx.bind(("t1", 0))
    return tx, rx


def eth(seq: int, size: int) -> bytes:
    head = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + b"\x88\xb5" + seq.to_bytes(4, "big")
    return head + bytes((seq * 7 + i) & 0xFF for i in range(size - len(head)))


def received(rx: socket.socket, count: int) -> list[bytes]:
    rx.settimeout(2.0)
    got: list[bytes] = []
    try:
        while len(got) < count:
            data, addr = rx.recvfrom(65536)
            if addr[2] != socket.PACKET_OUTGOING:
                got.append(data)
    except TimeoutError:
        pass
    return got


def test_bursts_over_several_ring_wraps_arrive_once_in_order(veth: str) -> None:
    tx, rx = sockets(veth)
    with entered(veth):
        plain = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        plain.bind(("t0", 0))
    ring = TxRing(tx, frames=24, batch=16, oversize=plain)
    try:
        sizes = [60, 1514, 9014, 61, 4000, 10208, 14000, 128]  # 10208 fills a slot; 14000 is sent on its own
        frames = [eth(i, sizes[i % len(sizes)]) for i in range(200)]
        for f in frames:
            ring.add(f)
        ring.flush()
        assert ring.pending == 0 and ring.errors == 0 and ring.sent == 200
        assert ring.calls < 200  # bursts, not a call per frame (the over-slot frames go alone)
        assert received(rx, 200) == frames
        assert received(rx, 1) == []  # nothing twice
    finally:
        ring.close()
        for s in (tx, rx, plain):
            s.close()


def test_a_frame_over_the_mtu_is_dropped_and_counted_the_rest_still_go(veth: str) -> None:
    sh("ip", "-n", veth, "link", "set", "t0", "mtu", "1500")
    tx, rx = sockets(veth)
    ring = TxRing(tx, batch=64)
    try:
        frames = [eth(i, 3000 if i in (10, 25) else 1514) for i in range(40)]
        for f in frames:
            ring.add(f)
        ring.flush()
        assert ring.errors == 2 and ring.sent == 38
        assert received(rx, 38) == [f for i, f in enumerate(frames) if i not in (10, 25)]
    finally:
        ring.close()
        tx.close()
        rx.close()


def test_frames_queued_while_the_interface_is_down_are_dropped_then_sending_resumes(veth: str) -> None:
    tx, rx = sockets(veth)
    ring = TxRing(tx, frames=24, batch=16)
    try:
        sh("ip", "-n", veth, "link", "set", "t0", "down")
        for i in range(10):
            ring.add(eth(i, 100))
        ring.flush()
        assert ring.errors == 10 and ring.sent == 0
        sh("ip", "-n", veth, "link", "set", "t0", "up")
        after = [eth(100 + i, 100) for i in range(40)]  # wraps the ring: the kernel's position must still match ours
        for f in after:
            ring.add(f)
        ring.flush()
        assert ring.sent == 40 and ring.errors == 10
        assert received(rx, 40) == after
    finally:
        ring.close()
        tx.close()
        rx.close()
