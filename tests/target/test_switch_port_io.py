"""Batched port I/O of the live switch (issue 17): bursts through a switch whose ports are veths in a namespace this
test creates, checked frame by frame against plain per-packet sockets on the far ends.

Every frame must arrive exactly once, in order per port, byte-identical: jumbo frames, bursts many ring blocks
long, both port I/O paths (mmap ring + sendmmsg, and the per-packet fallback). Seeded impairments still decide per
packet: with `loss` alone each frame costs one `random.Random(seed).random()` draw (docs/targets.md), so the frames
that survive are known exactly in advance.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4switch.compiler import compile_file
from p4switch.switch import ports as ports_mod
from p4switch.switch.core import Switch
from pktio.netns import entered

pytestmark = pytest.mark.root

#: Port 1 <-> port 2, frames untouched (no header is extracted, so the deparser re-emits the frame as it came).
WIRE_P4 = """
#include <core.p4>
#include <v1model.p4>
struct H {}
struct M {}
parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) { state start { transition accept; } }
control VC(inout H h, inout M m) { apply {} }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { if (sm.ingress_port == 1) { sm.egress_spec = 2; } else { sm.egress_spec = 1; } }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out pkt, in H h) { apply {} }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
ETHERTYPE = b"\x88\xb5"  # IEEE local experimental: nothing in the kernel answers it


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=30)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, bytes]:
    src = tmp_path_factory.mktemp("wire") / "wire.p4"
    src.write_text(WIRE_P4)
    compiled = compile_file(Path(src))
    return compiled.p4info, compiled.device_config_bytes()


@pytest.fixture
def netns() -> Iterator[str]:
    name = f"p4ina-pio{os.getpid()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    sh("ip", "netns", "add", name)
    try:
        for key in ("all", "default"):
            sh("ip", "netns", "exec", name, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        for a, b in (("va0", "va1"), ("vb0", "vb1")):
            sh("ip", "-n", name, "link", "add", a, "type", "veth", "peer", "name", b)
            for end in (a, b):
                sh("ip", "-n", name, "link", "set", end, "mtu", "9000", "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


class Host:
    """The far end of one switch port: a plain AF_PACKET socket, one system call per frame (independent of the
    code under test)."""

    def __init__(self, ifname: str) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        self.sock.bind((ifname, 0))

    def send(self, frames: list[bytes]) -> None:
        for f in frames:
            self.sock.send(f)

    def collect(self, tag: bytes, expect: int, timeout: float = 20.0) -> list[bytes]:
        """Frames carrying `tag` that arrive until `expect` came, or `timeout` passed; then a short grace period
        so that any extra copy (a duplicate) would be seen too."""
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        grace: float | None = None
        while time.monotonic() < (grace or deadline):
            self.sock.settimeout(max(min(grace or deadline, deadline) - time.monotonic(), 0.001))
            try:
                data, addr = self.sock.recvfrom(65536)
            except TimeoutError:
                continue
            if addr[2] != PACKET_OUTGOING and data[14:14 + len(tag)] == tag:
                got.append(data)
                if len(got) >= expect and grace is None:
                    grace = time.monotonic() + 0.3
        return got

    def close(self) -> None:
        self.sock.close()


def frame(tag: bytes, seq: int, size: int, src: int) -> bytes:
    head = bytes([2, 0, 0, 0, 0, 0x10 + src]) + bytes([2, 0, 0, 0, 0, src]) + ETHERTYPE + tag + seq.to_bytes(4, "big")
    body = bytes((seq * 7 + i) & 0xFF for i in range(size - len(head)))
    return head + body


def sizes(n: int) -> list[int]:
    """Minimum, middle and jumbo sizes mixed: 60 .. 9014 bytes (a 9000-byte MTU plus the Ethernet header)."""
    pattern = (60, 61, 128, 1514, 4000, 8999, 9014, 777, 64)
    return [pattern[i % len(pattern)] for i in range(n)]


@pytest.fixture
def wired(netns: str, program: tuple[object, bytes], request: pytest.FixtureRequest) -> Iterator[tuple[Switch, Host, Host]]:
    port_io = getattr(request, "param", "auto")
    sw = Switch(queue_depth=1024, port_io=port_io)
    sw.install_pipeline(*program)  # type: ignore[arg-type]
    with entered(netns):
        sw.add_interface(1, "va1")
        sw.add_interface(2, "vb1")
        a, b = Host("va0"), Host("vb0")
    sw.start()
    try:
        yield sw, a, b
    finally:
        sw.stop()
        a.close()
        b.close()


@pytest.mark.parametrize("wired", ["ring", "socket"], indirect=True)
def test_bursts_arrive_once_in_order_byte_identical(wired: tuple[Switch, Host, Host]) -> None:
    sw, a, b = wired
    expected_io = sw.port_io
    assert {p["io"] for p in sw.stats()["ports"].values()} == {expected_io}
    burst = 300  # 50 ring blocks of six slots; below the ring's 516 slots, so nothing may be dropped
    for round_ in range(4):
        tag = b"pio-burst" + bytes([round_])
        to_b = [frame(tag, i, s, 1) for i, s in enumerate(sizes(burst))]
        to_a = [frame(tag, i, s, 2) for i, s in enumerate(reversed(sizes(burst)))]
        a.send(to_b)
        b.send(to_a)
        got_b = b.collect(tag, burst)
        got_a = a.collect(tag, burst)
        assert len(got_b) == burst and len(got_a) == burst, (len(got_b), len(got_a), sw.stats()["ports"])
        assert got_b == to_b  # exactly once each, in order, byte-identical (jumbo frames included)
        assert got_a == to_a
    stats = sw.stats()
    assert stats["ports"][1]["tx_errors"] == stats["ports"][2]["tx_errors"] == 0
    assert stats["ports"][1].get("ring_drops", 0) == 0


def test_seeded_loss_still_decides_per_packet(wired: tuple[Switch, Host, Host]) -> None:
    sw, a, b = wired
    assert sw.stats()["ports"][1]["io"] == "ring"
    n, loss, seed = 600, 0.2, 11
    sw.set_impairment(1, "in", loss=loss, seed=seed)
    rng = random.Random(seed)  # the documented model: one draw per frame, lost when below `loss`
    survivors = [i for i in range(n) if not rng.random() < loss]
    tag = b"pio-loss"
    sent = [frame(tag, i, 100 + i % 50, 1) for i in range(n)]
    a.send(sent[:300])
    got = b.collect(tag, sum(1 for i in survivors if i < 300))
    a.send(sent[300:])
    got += b.collect(tag, len(survivors) - len(got))
    assert abs(len(got) - n * (1 - loss)) < 4 * (n * loss * (1 - loss)) ** 0.5  # about the right count
    assert got == [sent[i] for i in survivors]  # and exactly the frames the seeded draws spare, in order
    assert sw.impairment_stats()["1/in"]["lost"] == n - len(survivors)


def test_seeded_egress_loss_and_duplication_are_decided_in_the_batch(
    wired: tuple[Switch, Host, Host], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loss and duplication without delay are decided in the switch's transmit path (its bursts), never through the
    delay line (its `submit` would raise here), with the documented per-frame draws: loss first, then dup."""
    sw, a, b = wired

    def no_delay_line(*_args: object) -> None:
        raise AssertionError("an instant impairment went through the delay line")

    monkeypatch.setattr(sw.links, "submit", no_delay_line)
    n, loss, dup, seed = 600, 0.2, 0.25, 5
    sw.set_impairment(2, "out", loss=loss, dup=dup, seed=seed)
    rng = random.Random(seed)
    copies = []
    for _ in range(n):
        copies.append(0 if rng.random() < loss else 2 if rng.random() < dup else 1)
    tag = b"pio-eloss"
    sent = [frame(tag, i, 100 + i % 50, 1) for i in range(n)]
    got: list[bytes] = []
    for lo in range(0, n, 200):  # below the rx ring's 516 slots, so the ring itself drops nothing
        a.send(sent[lo:lo + 200])
        got += b.collect(tag, sum(copies[lo:lo + 200]))
    assert got == [f for f, k in zip(sent, copies, strict=True) for _ in range(k)]
    stats = sw.impairment_stats()["2/out"]
    assert (stats["lost"], stats["duplicated"]) == (copies.count(0), copies.count(2))
    assert sw.stats()["errors"] == 0  # the transmit path never raised (the delay line was not called)


def test_duplicates_and_outbound_delay_apply_per_packet(wired: tuple[Switch, Host, Host]) -> None:
    sw, a, b = wired
    sw.set_impairment(2, "out", dup=1.0, delay_ms=5.0, seed=3)
    tag = b"pio-dup"
    sent = [frame(tag, i, 200, 1) for i in range(100)]
    a.send(sent)
    got = b.collect(tag, 200)
    assert got == [f for f in sent for _ in range(2)]  # each frame twice, back to back, in order


def test_ring_refused_falls_back_to_one_call_per_packet(
    netns: str, program: tuple[object, bytes], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_ring(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(ports_mod, "RxRing", no_ring)
    sw = Switch(port_io="auto")
    sw.install_pipeline(*program)  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO, logger="p4switch.switch"), entered(netns):
        sw.add_interface(1, "va1")
        sw.add_interface(2, "vb1")
        a, b = Host("va0"), Host("vb0")
    try:
        assert "no ring: not enough locked memory" in sw.port_io_summary()
        assert any("port 1 on va1: recvfrom/send per packet" in r.getMessage() for r in caplog.records)
        sw.start()
        tag = b"pio-fallback"
        sent = [frame(tag, i, s, 1) for i, s in enumerate(sizes(120))]
        a.send(sent)
        assert b.collect(tag, len(sent)) == sent
        with pytest.raises(Exception, match="no packet ring on va1"), entered(netns):
            Switch(port_io="ring").add_interface(1, "va1")
    finally:
        sw.stop()
        a.close()
        b.close()


@pytest.mark.parametrize(("flag", "says"), [("auto", "mmap rx ring + sendmmsg"), ("socket", "recvfrom/send per packet")])
def test_start_up_line_names_the_port_io(netns: str, tmp_path: Path, flag: str, says: str) -> None:
    from switch_cli_runner import switch_command

    (tmp_path / "wire.p4").write_text(WIRE_P4)
    compiled = compile_file(tmp_path / "wire.p4")
    (tmp_path / "wire.json").write_bytes(compiled.device_config_bytes())
    (tmp_path / "wire.p4info.txtpb").write_text(compiled.p4info_text())
    cmd = ["ip", "netns", "exec", netns, *switch_command(["wire.json", "-i", "1@va1", "-i", "2@vb1", "--port-io", flag])]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "running" in line and f"(port I/O: {says})" in line, line
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
