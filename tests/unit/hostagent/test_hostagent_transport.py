"""Transports: UDP through the kernel, the frame tunnel (multi-process workers to one in-process switch), and
AF_PACKET on a veth pair (root)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from hostagent_switch_model import SwitchModel

from hostagent import protocol as P
from hostagent.codec import ChunkHeaders, Endpoints, build_template, fill_frames
from hostagent.exceptions import NoRouteError
from hostagent.transport import L4_PAYLOAD, PacketSocketTransport, UdpTransport, udp_payload
from hostagent.tunnel import FrameTunnel, TunnelTransport
from hostagent.worker import Worker


def _frame(udp_port: int = 41000, dport: int = P.AGG_PORT) -> bytes:
    hdr = ChunkHeaders(job_id=1, child=0, step=0, slots=np.array([0]), versions=np.array([0]), seqs=np.array([5]),
                       exps=np.array([0]))
    raw = bytearray(fill_frames(build_template(Endpoints(udp_port=udp_port), P.FMT_INT32), P.FMT_INT32, hdr,
                                np.ones((1, 64), dtype=np.int64))[0].tobytes())
    raw[36:38] = dport.to_bytes(2, "big")
    return bytes(raw)


def test_udp_payload_filter() -> None:
    frame = _frame(dport=41000)
    assert udp_payload(frame, 41000) == frame[L4_PAYLOAD:]
    assert udp_payload(frame, 41001) is None
    assert udp_payload(frame[:30], 41000) is None
    assert udp_payload(b"\x00" * 12 + b"\x86\xdd" + frame[14:], 41000) is None  # not IPv4


def test_udp_transport_sends_the_payload_and_receives_on_its_port() -> None:
    switch = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    switch.bind(("127.0.0.1", 0))
    agg_port = switch.getsockname()[1]
    t = UdpTransport("127.0.0.1", local_port=0, bind_addr="127.0.0.1", agg_port=agg_port)
    try:
        frame = _frame()
        t.send(np.frombuffer(frame, dtype=np.uint8))
        payload, worker_addr = switch.recvfrom(2048)
        assert payload == frame[L4_PAYLOAD:]
        switch.sendto(b"result", worker_addr)
        assert t.recv(2.0) == b"result"
        assert t.recv(0.01) is None
    finally:
        t.close()
        switch.close()


def test_udp_transport_bind_failure_is_no_route() -> None:
    with pytest.raises(NoRouteError, match="no route to the switch"):
        UdpTransport("127.0.0.1", local_port=0, bind_addr="192.0.2.1")  # not an address of this host


def test_workers_in_other_threads_reach_a_switch_through_the_frame_tunnel() -> None:
    model = SwitchModel(job=2, n_children=3, ports=[5, 6, 7], pool_size=4)
    tunnel = FrameTunnel(model)
    try:
        workers = [
            Worker(2, r, n_workers=3, pool_size=4, timeout=0.05, endpoints=Endpoints(udp_port=43000 + r),
                   transport=TunnelTransport(tunnel.address, switch_port=5 + r, udp_port=43000 + r))
            for r in range(3)
        ]
        out: list[np.ndarray] = [np.empty(0)] * 3

        def go(r: int) -> None:
            out[r] = workers[r].allreduce(np.full(300, r + 1, dtype=np.int32))

        threads = [threading.Thread(target=go, args=(r,)) for r in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        assert all(np.array_equal(o, np.full(300, 6)) for o in out)
    finally:
        tunnel.close()
        for w in workers:
            w.transport.close()


@pytest.fixture
def veth() -> Iterator[tuple[str, str]]:
    a, b = f"ha{uuid.uuid4().hex[:8]}", f"hb{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:  # needs root and the veth driver: a failure, not a skip
        pytest.fail(f"cannot create a veth pair: {exc}")
    try:
        for name in (a, b):
            subprocess.run(["ip", "link", "set", name, "up"], check=True, capture_output=True)
        yield a, b
    finally:
        subprocess.run(["ip", "link", "del", a], capture_output=True)


@pytest.mark.root
def test_packet_socket_transport_on_a_veth_pair(veth: tuple[str, str]) -> None:
    assert os.geteuid() == 0
    host_if, switch_if = veth
    t = PacketSocketTransport(host_if, udp_port=41000)
    peer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    peer.bind((switch_if, 0))
    peer.settimeout(2.0)
    try:
        frame = _frame()
        t.send(frame)
        while True:  # the kernel may put its own frames (IPv6 router solicitations) on a fresh link
            got = peer.recv(2048)
            if got[:len(frame)] == frame:
                break
        reply = _frame(dport=41000)
        peer.send(reply)
        assert t.recv(2.0) == reply[L4_PAYLOAD:]
    finally:
        t.close()
        peer.close()
    with pytest.raises(NoRouteError, match="cannot open interface"):
        PacketSocketTransport("nonexistent0", udp_port=1)
