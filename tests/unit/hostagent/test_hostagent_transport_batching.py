"""Batched host transports (issue 17): frames queued with `send_later` leave, in order, when `recv` would wait or
on `flush`, never before; `recv` drains a burst and hands it out one payload at a time; with `batched=False` the
same calls give the same results one system call at a time. Peers are plain per-packet sockets."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from hostagent.transport import L4_PAYLOAD, PacketSocketTransport, UdpTransport
from pktio.netns import entered

PORT = 41500


def frame(seq: int, dport: int = PORT, size: int = 300) -> bytes:
    """Ethernet/IPv4/UDP to `dport` with a payload that starts with `seq`."""
    ip = bytes([0x45, 0]) + (20 + 8 + size).to_bytes(2, "big") + bytes([0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1,
                                                                        10, 0, 0, 2])
    udp = (40000).to_bytes(2, "big") + dport.to_bytes(2, "big") + (8 + size).to_bytes(2, "big") + bytes(2)
    payload = seq.to_bytes(4, "big") + bytes((seq + i) & 0xFF for i in range(size - 4))
    return bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0]) + ip + udp + payload


@pytest.mark.parametrize("batched", [True, False])
def test_udp_sends_queue_until_recv_would_wait_and_receives_drain_in_order(batched: bool) -> None:
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    t = UdpTransport("127.0.0.1", local_port=0, bind_addr="127.0.0.1", agg_port=sink.getsockname()[1],
                     batched=batched)
    sink.connect(t.sock.getsockname())
    try:
        frames = [frame(i) for i in range(150)]
        for f in frames:
            t.send_later(f)
        sink.settimeout(0.05)
        if batched:  # 150 = two full bursts of 64 already gone, 22 still queued until recv would wait
            got = [sink.recv(2048) for _ in range(128)]
            with pytest.raises(TimeoutError):
                sink.recv(2048)
            assert t.recv(0.0) is None  # nothing to receive: the queue leaves before the wait
            got += [sink.recv(2048) for _ in range(22)]
        else:
            got = [sink.recv(2048) for _ in range(150)]
        assert got == [f[L4_PAYLOAD:] for f in frames]
        replies = [frame(1000 + i)[L4_PAYLOAD:] for i in range(100)]
        for r in replies:
            sink.send(r)
        time.sleep(0.05)
        out = []
        while (p := t.recv(0.5)) is not None:
            out.append(p)
        assert out == replies
    finally:
        t.close()
        sink.close()


@pytest.fixture
def veth_ns() -> Iterator[str]:
    if os.geteuid() != 0:  # the suite runs as root (docs/testing.md): not being root fails, never skips
        pytest.fail("needs root for a network namespace")
    ns = f"p4ina-tb{os.getpid()}"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    try:
        for cmd in (["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
                    ["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
                    ["ip", "link", "add", "h0", "type", "veth", "peer", "name", "s0"],
                    ["ip", "link", "set", "h0", "up"], ["ip", "link", "set", "s0", "up"]):
            subprocess.run(["ip", "netns", "exec", ns, *cmd], check=True, capture_output=True)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.mark.root
@pytest.mark.parametrize("batched", [True, False])
def test_packet_socket_bursts_both_ways(veth_ns: str, batched: bool) -> None:
    with entered(veth_ns):
        t = PacketSocketTransport("h0", PORT, batched=batched)
        peer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        peer.bind(("s0", 0))
    peer.settimeout(2.0)
    try:
        frames = [frame(i) for i in range(100)]
        for f in frames:
            t.send_later(f)
        t.flush()
        got = []
        while len(got) < len(frames):
            data, addr = peer.recvfrom(65536)
            if addr[2] != socket.PACKET_OUTGOING:
                got.append(data)
        assert got == frames  # whole frames, as built, in order
        # a burst back: frames for other UDP ports are skipped, the rest come out one payload per recv, in order
        back = [frame(500 + i, dport=PORT if i % 3 else PORT + 1) for i in range(300)]
        for f in back:
            peer.send(f)
        out = []
        while (p := t.recv(0.5)) is not None:
            out.append(p)
        assert out == [f[L4_PAYLOAD:] for i, f in enumerate(back) if i % 3]
    finally:
        t.close()
        peer.close()
