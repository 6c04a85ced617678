"""pktio against the kernel: sendmmsg/recvmmsg on UDP loopback (any user), and the TPACKET_V2 ring plus sendmmsg
on AF_PACKET over a veth pair in a namespace the test creates (root). Expected frames are the ones sent; the
receiving or sending side of each check is a plain per-packet socket, independent of the code under test."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from pktio.mmsg import BurstSender, MmsgReceiver, MmsgSender
from pktio.netns import entered
from pktio.ring import RxRing

ETH_P_ALL = 0x0003


def udp_pair() -> tuple[socket.socket, socket.socket]:
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for s in (a, b):
        s.bind(("127.0.0.1", 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    a.connect(b.getsockname())
    b.connect(a.getsockname())
    return a, b


def test_sendmmsg_sends_a_burst_in_order_and_skips_what_the_kernel_refuses() -> None:
    a, b = udp_pair()
    try:
        sender = MmsgSender(a, slots=64, slot_size=2048)
        data = [bytes([i]) * (1 + i * 7) for i in range(200)]
        sender.add_all(data[:100])
        sender.add(bytes(70000))  # over UDP's 65507: larger than a slot, sent alone, refused
        sender.add_all(data[100:])
        sender.flush()
        assert sender.pending == 0 and sender.errors == 1 and sender.sent == 200
        assert sender.calls <= 7  # 200 datagrams in bursts of up to 64, plus the lone oversized one
        b.settimeout(2.0)
        assert [b.recv(65536) for _ in range(200)] == data
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("zero_copy", [True, False])
def test_burst_sender_sends_a_list_in_order_grows_and_skips_what_the_kernel_refuses(zero_copy: bool) -> None:
    a, b = udp_pair()
    try:
        # smaller than the bursts below: it must grow
        sender = BurstSender(a, burst=8, buffer=256, zero_copy=zero_copy)
        data = [bytes([i]) * (1 + i * 5) for i in range(100)]
        assert sender.send(data[:50]) == 50
        assert sender.send([data[50], bytes(70000), *data[51:]]) == 50  # over UDP's 65507: refused alone
        assert sender.send([]) == 0
        assert sender.sent == 100 and sender.errors == 1
        assert sender.calls == 4  # one sendmmsg per burst, two more around the refused datagram
        b.settimeout(2.0)
        assert [b.recv(65536) for _ in range(100)] == data
    finally:
        a.close()
        b.close()


def test_recvmmsg_drains_what_is_waiting_and_drops_truncated_datagrams() -> None:
    a, b = udp_pair()
    try:
        receiver = MmsgReceiver(b, slots=64, slot_size=256)
        assert receiver.recv_batch() == []
        data = [i.to_bytes(2, "big") * (i % 100 + 1) for i in range(100)]
        for d in data[:50]:
            a.send(d)
        a.send(bytes(300))  # bigger than a slot: truncated, so dropped, never handed out cut short
        for d in data[50:]:
            a.send(d)
        time.sleep(0.05)
        got = receiver.recv_batch() + receiver.recv_batch()
        assert got == data
        assert receiver.truncated == 1
        assert receiver.recv_batch() == []
    finally:
        a.close()
        b.close()


# ------------------------------------------------------------------------------------------- AF_PACKET (root)


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=30)


@pytest.fixture
def veth() -> Iterator[str]:
    if os.geteuid() != 0:  # the suite runs as root (docs/testing.md): not being root fails, never skips
        pytest.fail("needs root for a network namespace")
    ns = f"p4ina-pktio{os.getpid()}"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    sh("ip", "netns", "add", ns)
    try:
        for key in ("all", "default"):
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        sh("ip", "-n", ns, "link", "add", "x0", "type", "veth", "peer", "name", "x1")
        for end in ("x0", "x1"):
            sh("ip", "-n", ns, "link", "set", end, "mtu", "16000", "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def raw(ifname: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((ifname, 0))
    return s


def eth(seq: int, size: int, vlan: bytes = b"") -> bytes:
    head = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + vlan + b"\x88\xb5" + seq.to_bytes(4, "big")
    return head + bytes((seq + i) & 0xFF for i in range(size - len(head)))


def drain(ring: RxRing, want: int, timeout: float = 5.0) -> list[bytes]:
    import select

    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        frames = ring.recv_batch(1024)
        if frames:
            got += frames
        else:
            select.select([ring], [], [], 0.05)
    return got


@pytest.mark.root
def test_ring_receives_jumbo_vlan_and_oversized_frames_intact(veth: str) -> None:
    with entered(veth):
        tx, rx = raw("x0"), raw("x1")
    ring = RxRing(rx)
    try:
        frames = [eth(i, size) for i, size in enumerate((60, 1514, 9014, 61, 4000))]
        frames.append(eth(5, 200, vlan=b"\x81\x00\x20\x07"))  # the kernel strips the tag; the ring puts it back
        frames.append(eth(6, 15000))  # larger than a ring slot: read whole from the socket
        frames.append(eth(7, 64))
        for f in frames:
            tx.send(f)
        assert drain(ring, len(frames)) == frames
        assert ring.copied == 1 and ring.truncated == 0
    finally:
        ring.close()
        tx.close()
        rx.close()


@pytest.mark.root
def test_ring_skips_own_transmissions_and_counts_what_overflows(veth: str) -> None:
    with entered(veth):
        tx, rx = raw("x0"), raw("x1")
    ring = RxRing(rx, frames=60)
    try:
        rx.send(eth(99, 60))  # our own transmission on the ring's interface: never handed back
        sent = [eth(i, 100) for i in range(100)]
        for f in sent:
            tx.send(f)
        time.sleep(0.1)
        got = drain(ring, ring.frames, timeout=1.0)
        assert got == sent[: ring.frames]  # the ring held the first ones; the kernel dropped the rest
        _packets, drops = ring.statistics()
        assert drops == len(sent) - ring.frames
    finally:
        ring.close()
        tx.close()
        rx.close()


@pytest.mark.root
@pytest.mark.parametrize("kernel_filter", [True, False])
def test_ring_skips_frames_another_socket_sends_on_its_interface(veth: str, kernel_filter: bool) -> None:
    with entered(veth):
        tx, rx, other = raw("x0"), raw("x1"), raw("x1")
    # without PACKET_IGNORE_OUTGOING the kernel copies other sockets' transmissions on x1 into the ring as
    # PACKET_OUTGOING slots, which the reader must skip (a socket never gets its own: the kernel skips those)
    ring = RxRing(rx, ignore_outgoing=kernel_filter)
    try:
        assert ring.ignores_outgoing == kernel_filter
        sent = []
        for i in range(30):
            other.send(eth(1000 + i, 80))
            sent.append(eth(i, 60 + i))
            tx.send(sent[-1])
        assert drain(ring, len(sent)) == sent
        time.sleep(0.05)
        assert ring.recv_batch(100) == []
    finally:
        ring.close()
        for s in (tx, rx, other):
            s.close()


@pytest.mark.root
def test_ring_discard_counts_frames_without_handing_them_out(veth: str) -> None:
    with entered(veth):
        tx, rx = raw("x0"), raw("x1")
    ring = RxRing(rx)
    try:
        rx.send(eth(99, 60))  # our own transmission: not counted
        frames = [eth(i, size) for i, size in enumerate((60, 9014, 61, 15000, 70))]  # 15000: read whole, counted
        for f in frames:
            tx.send(f)
        deadline, counted = time.monotonic() + 5.0, 0
        while counted < len(frames) and time.monotonic() < deadline:
            counted += ring.discard(3)  # three slots at a time: the walk resumes where it stopped
            time.sleep(0.01)
        assert counted == len(frames)
        tx.send(eth(7, 64))  # the slots were handed back: the next frame is read normally
        assert drain(ring, 1) == [eth(7, 64)]
    finally:
        ring.close()
        tx.close()
        rx.close()


@pytest.mark.root
def test_sendmmsg_on_a_packet_socket_drops_only_the_frame_over_the_mtu(veth: str) -> None:
    with entered(veth):
        sh("ip", "-n", veth, "link", "set", "x0", "mtu", "1500")
        tx, rx = raw("x0"), raw("x1")
    try:
        sender = MmsgSender(tx)
        frames = [eth(i, 1514 if i != 10 else 3000) for i in range(40)]
        sender.add_all(frames)
        sender.flush()
        assert sender.errors == 1 and sender.sent == 39
        rx.settimeout(2.0)
        got: list[bytes] = []
        while len(got) < 39:
            data, addr = rx.recvfrom(65536)
            if addr[2] != socket.PACKET_OUTGOING:
                got.append(data)
        assert got == frames[:10] + frames[11:]
    finally:
        tx.close()
        rx.close()


def test_burst_sender_zero_copy_sends_each_bytes_object_as_it_is() -> None:
    """The zero-copy path (CPython): each iovec points into its `bytes` object, so every datagram must arrive
    byte for byte, at any size up to jumbo frames and for `bytes` subclasses; a burst with other buffer types
    (bytearray, memoryview) takes the joined copy and arrives the same."""
    import platform

    class Tagged(bytes):
        pass

    a, b = udp_pair()
    try:
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 21)
        sender = BurstSender(a, burst=4)
        assert sender.zero_copy == (platform.python_implementation() == "CPython")
        data = [os.urandom(size) for size in (1, 2, 7, 8, 9, 60, 1500, 4096, 8242, 9000)]
        data.append(Tagged(os.urandom(333)))
        assert sender.send(data) == len(data)
        mixed = [os.urandom(100), bytearray(os.urandom(200)), memoryview(os.urandom(300))]
        assert sender.send(mixed) == 3  # type: ignore[arg-type]
        b.settimeout(2.0)
        assert [b.recv(65536) for _ in range(len(data) + 3)] == [*data, *(bytes(m) for m in mixed)]
    finally:
        a.close()
        b.close()


@pytest.mark.root
def test_ring_ready_says_whether_the_next_slot_holds_a_frame(veth: str) -> None:
    """`RxRing.ready()` (what the switch's worker checks before walking an idle port's ring): False on an empty ring,
    True once a frame waits, and across the ring's wrap-around, False again once everything was read."""
    with entered(veth):
        tx, rx = raw("x0"), raw("x1")
    ring = RxRing(rx, frames=12)
    try:
        assert not ring.ready()
        for burst in range(3):  # 3 x 8 frames through a ring of 12 slots: the read position wraps around
            sent = [eth(burst * 8 + i, 80) for i in range(8)]
            for f in sent:
                tx.send(f)
            deadline = time.monotonic() + 5.0
            while not ring.ready() and time.monotonic() < deadline:
                time.sleep(0.005)
            assert ring.ready()
            assert drain(ring, len(sent)) == sent
            assert not ring.ready() and ring.recv_batch(64) == []
    finally:
        ring.close()
        tx.close()
        rx.close()
