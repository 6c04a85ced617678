"""Host agent packet I/O: CPU time per packet of a transport's send and receive paths, batched (sendmmsg bursts,
recvmmsg / mmap-ring drains) against one system call per packet (`batched=False`, the path before issue 17), for
the UDP transport on loopback and the AF_PACKET transport on a veth pair in a namespace this module creates."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any

#: A DATA frame of 64 int32 values: Ethernet, IPv4, UDP, then a payload of the aggregation packet's size.
PAYLOAD = 284
WINDOW = 64  # frames per burst: a window of in-flight chunks, as a worker sends them
UDP_PORT = 47000


def run(quick: bool) -> dict[str, Any]:
    n = 20_000 if quick else 100_000
    results: dict[str, Any] = {"packets": n, "window": WINDOW, "payload_bytes": PAYLOAD}
    results["udp_loopback"] = {mode: _udp(n, batched=mode == "batched") for mode in ("per_packet", "batched")}
    if os.geteuid() != 0:
        results["packet_socket_veth"] = {"skipped": "needs root for a veth pair"}
    else:
        results["packet_socket_veth"] = _packet_socket(n)
    summary: dict[str, Any] = {}
    for name in ("udp_loopback", "packet_socket_veth"):
        r = results[name]
        if "batched" in r:
            for path in ("send", "recv"):
                old, new = r["per_packet"][f"{path}_us"], r["batched"][f"{path}_us"]
                summary[f"{name}_{path}_us"] = new
                summary[f"{name}_{path}_speedup"] = round(old / new, 2) if new else None
    results["summary"] = summary
    return results


def _frame(dport: int, seq: int) -> bytes:
    ip = bytes([0x45, 0]) + (20 + 8 + PAYLOAD).to_bytes(2, "big") + bytes([0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1,
                                                                           10, 0, 0, 2])
    udp = (40000).to_bytes(2, "big") + dport.to_bytes(2, "big") + (8 + PAYLOAD).to_bytes(2, "big") + bytes(2)
    return bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0]) + ip + udp + seq.to_bytes(4, "big") + bytes(PAYLOAD - 4)


def _cpu_us(n: int, fn: Callable[[], int]) -> tuple[float, int]:
    start = time.thread_time()
    done = fn()
    return round((time.thread_time() - start) / n * 1e6, 3), done


def _measure(transport: Any, peer_send: Callable[[list[bytes]], None], frames: list[bytes], n: int) -> dict[str, Any]:
    """Send path: `send_later` a window at a time and flush (what a worker does). Receive path: the peer puts a
    window's worth of frames in flight, then the transport's `recv(0)` drains them (only the transport's CPU is
    timed)."""

    def send() -> int:
        for start in range(0, n, WINDOW):
            for i in range(start, min(start + WINDOW, n)):
                transport.send_later(frames[i % len(frames)])
            transport.flush()
        return n

    send_us, _ = _cpu_us(n, send)
    got = 0
    cpu = 0.0
    for start in range(0, n, 256):
        peer_send(frames[: min(256, n - start)])
        time.sleep(0.002)  # let the kernel deliver the burst (softirq) before the timed drain
        t = time.thread_time()
        while transport.recv(0.0) is not None:
            got += 1
        cpu += time.thread_time() - t
    return {"send_us": send_us, "recv_us": round(cpu / max(got, 1) * 1e6, 3), "received": got}


def _udp(n: int, batched: bool) -> dict[str, Any]:
    from hostagent.transport import L4_PAYLOAD, UdpTransport

    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    t = UdpTransport("127.0.0.1", local_port=0, bind_addr="127.0.0.1", agg_port=sink.getsockname()[1],
                     batched=batched)
    peer = sink  # the transport is connected to the sink: only datagrams from there reach it
    peer.connect(t.sock.getsockname())
    frames = [_frame(UDP_PORT, i) for i in range(256)]
    try:
        def peer_send(burst: list[bytes]) -> None:
            for f in burst:
                peer.send(f[L4_PAYLOAD:])

        return _measure(t, peer_send, frames, n)
    finally:
        t.close()
        sink.close()


def _packet_socket(n: int) -> dict[str, Any]:
    from hostagent.transport import PacketSocketTransport
    from pktio.netns import entered

    ns = f"p4b-ha{os.getpid()}"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    try:
        for cmd in (["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
                    ["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
                    ["ip", "link", "add", "h0", "type", "veth", "peer", "name", "s0"],
                    ["ip", "link", "set", "h0", "up"], ["ip", "link", "set", "s0", "up"]):
            subprocess.run(["ip", "netns", "exec", ns, *cmd], check=True, capture_output=True)
        frames = [_frame(UDP_PORT, i) for i in range(256)]
        out: dict[str, Any] = {}
        for mode in ("per_packet", "batched"):
            with entered(ns):
                t = PacketSocketTransport("h0", UDP_PORT, batched=mode == "batched")
                peer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
                peer.bind(("s0", 0))
                # the switch side's receive buffer fills with what the transport sends; nothing reads it
                drain = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
                drain.bind(("s0", 0))
            try:
                def peer_send(burst: list[bytes], peer: socket.socket = peer) -> None:
                    for f in burst:
                        peer.send(f)

                out[mode] = _measure(t, peer_send, frames, n)
            finally:
                t.close()
                peer.close()
                drain.close()
        return out
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(run(quick="--quick" in sys.argv), indent=2))
