"""A PFC deadlock on a Mininet ring (issue 9): three live `p4ina switch` processes on veths, routes that loop
(every switch sends RING_MAC to the next one), lossless queues towards the next switch served at 50 packets/s,
h2 sending 100 packets/s into the ring. The queues pass Xoff, pause propagation closes the cycle, a probe
comes back to its origin and is reported by digest, controller/pfc.py releases one queue of the cycle, and every
link of the ring moves again. Pause quanta are timed at 1 Mb/s (`Fabric(link_bps=)`), so one pause frame holds a
queue for up to 33 s and Python switches need not refresh pauses every few milliseconds. Data frames are counted
where they arrive on each ring link: with the hosts still sending, no link carries data for 1 s before the
controller acts (the deadlock is real, not a leak), and every link carries data again after it acts. Detection
and recovery times are printed (pytest -s) for the report."""

from __future__ import annotations

import importlib
import queue
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration]

for _module in ("p4switch.compiler", "p4switch.switch_cli", "p4fabric.fabric"):
    importlib.import_module(_module)  # a missing layer is an error, never a skip (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]
ING = "P4inaIngress"
LOSSLESS, DSCP = 3, 26
RING_MAC = "02:00:00:00:00:99"
NAMES = ("s1", "s2", "s3")
# The one host that feeds the ring. Frames to RING_MAC go round for ever (L2, no TTL), so one host fills every
# queue; with a single feeder, s1's and s3's queues hold ring traffic only, and the Xon each sends on draining
# (to the last sender it paused, docs/pfc.md) goes to its upstream switch, so the cycle unwinds link by link.
SENDING_HOST = "h2"
# Pause propagation (a paused queue pausing its senders) is never followed by an Xon (docs/pfc.md), so its pauses
# must end by themselves once the cycle is broken: 3906 quanta at 1 Mb/s = 2 s. While the cycle holds, a lapsed
# pause lets one frame through, which finds the paused queue and is answered with a new pause.
BACKLOG_QUANTA = 3906

# Runs in a host: a UDP frame of the lossless class to RING_MAC, `rate` per second for `seconds`.
SENDER = """
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame, rate, end = bytes.fromhex(sys.argv[2]), float(sys.argv[3]), time.monotonic() + float(sys.argv[4])
nxt = time.monotonic()
while time.monotonic() < end:
    s.send(frame)
    nxt += 1.0 / rate
    time.sleep(max(0.0, nxt - time.monotonic()))
"""


def _frame(src: str) -> str:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    pkt = Ether(src=src, dst=RING_MAC) / IP(src="10.0.0.1", dst="10.0.0.2", tos=DSCP << 2) / UDP(
        sport=1000, dport=2000) / bytes(18)
    return bytes(pkt).hex()


def _port(sw: Any, other: Any) -> tuple[int, str]:
    """(port number, interface name) of `sw`'s link to `other`."""
    ((intf, _),) = sw.connectionsTo(other)
    return int(sw.ports[intf]), intf.name


class Tap:
    """Times of the ring's data frames (IPv4 to RING_MAC) arriving at a switch's interface from the previous
    switch; PFC frames and probes have other EtherTypes and are not counted. Arrivals, not departures: frames a
    packet socket sends are not always shown to other packet sockets."""

    def __init__(self, ifname: str) -> None:
        self.times: list[float] = []
        self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
        self._sock.bind((ifname, 0x0800))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        dst = bytes.fromhex(RING_MAC.replace(":", ""))
        while not self._stop.is_set():
            if select.select([self._sock], [], [], 0.05)[0]:
                frame, addr = self._sock.recvfrom(2048)
                if addr[2] != socket.PACKET_OUTGOING and frame[:6] == dst:
                    self.times.append(time.monotonic())

    def since(self, t: float) -> int:
        return sum(x > t for x in list(self.times))

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


def test_ring_deadlock_forms_is_detected_broken_and_traffic_resumes(tmp_path: Path) -> None:
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    from controller.client import SwitchClient, entity, update
    from controller.pfc import Breaker, PfcEvent, PfcManager, PortPfc, QueueThresholds, SwitchPfc, decode_digest
    from p4switch.compiler import compile_file

    compiled = compile_file(str(REPO / "p4src" / "p4ina.p4"))
    fabric = Fabric(parse_topo_spec("ring,3"), target="embedded", out_dir=tmp_path / "out", priority_queues=8,
                    link_bps=1e6)
    senders: list[subprocess.Popen[bytes]] = []
    clients: dict[str, SwitchClient] = {}
    taps: dict[str, Tap] = {}

    def send(rate: float, seconds: float) -> None:
        for host in [fabric.node(SENDING_HOST)]:
            senders.append(host.popen([sys.executable, "-c", SENDER, host.defaultIntf().name,
                                       _frame(host.MAC()), str(rate), str(seconds)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def stop_senders() -> None:
        for p in senders:
            if p.poll() is None:
                p.kill()
            p.wait()
        senders.clear()

    with fabric:
        try:
            sw = {n: fabric.switch(n) for n in NAMES}
            nxt_port: dict[str, tuple[int, str]] = {}
            prv_port: dict[str, int] = {}
            prv_intf: dict[str, str] = {}
            host_port: dict[str, int] = {}
            for i, name in enumerate(NAMES):
                nxt, prv = NAMES[(i + 1) % 3], NAMES[(i - 1) % 3]
                nxt_port[name] = _port(sw[name], sw[nxt])
                prv_port[name], prv_intf[name] = _port(sw[name], sw[prv])
                host_port[name] = _port(sw[name], fabric.node(f"h{i + 1}"))[0]
            links = {(n, nxt_port[n][0]): (NAMES[(i + 1) % 3], prv_port[NAMES[(i + 1) % 3]])
                     for i, n in enumerate(NAMES)}
            links |= {b: a for a, b in list(links.items())}
            actions: queue.Queue[tuple[str, object]] = queue.Queue()
            for name in NAMES:
                clients[name] = SwitchClient(name, sw[name].grpc_address, timeout=10).connect()
            manager = PfcManager(clients, break_ms=500, links=links,
                                 on_event=lambda kind, what: actions.put((kind, what)))
            for i, name in enumerate(NAMES):
                client = clients[name]
                client.set_pipeline(compiled.p4info, compiled.device_config_bytes())
                p4 = client.p4
                client.write([update("INSERT", entity(p4.table_entry(
                    f"{ING}.qos.dscp_priority", {"hdr.ipv4.dscp": DSCP}, f"{ING}.qos.set_priority",
                    {"prio": LOSSLESS})))])
                client.write([update("INSERT", entity(p4.table_entry(
                    f"{ING}.forwarding.l2", {"hdr.ethernet.dst_addr": RING_MAC}, f"{ING}.forwarding.l2_forward",
                    {"port": nxt_port[name][0]})))])
                port = nxt_port[name][0]
                manager.configure(name, SwitchPfc(
                    switch_id=i + 1,
                    ports=(PortPfc(port, link_bps=1e6, detect_ms=60_000, deadlock_ms=200, probe_interval_ms=100,
                                   backlog_xoff=8, backlog_quanta=BACKLOG_QUANTA),),
                    thresholds=(QueueThresholds(port, LOSSLESS, xoff=16, xon=4),),
                    sender_ports=(prv_port[name], host_port[name])))
                running = sw[name].running
                assert running is not None
                sw[name].target.set_queue_rate(running, 50, port, LOSSLESS)

            # taps[n]: data frames on the link from n to the next switch, seen where they arrive.
            taps.update((n, Tap(prv_intf[NAMES[(i + 1) % 3]])) for i, n in enumerate(NAMES))

            def events(timeout: float) -> list[PfcEvent]:
                got: list[PfcEvent] = []
                for name in NAMES:
                    try:
                        got += decode_digest(name, clients[name].digests.get(timeout=timeout))
                    except queue.Empty:
                        pass
                return got

            start = time.monotonic()
            send(100, 60)
            pending: list[PfcEvent] = []
            while not any(e.kind == "deadlock" for e in pending):
                assert time.monotonic() - start < 30, "no deadlock reported within 30 s"
                pending += events(0.05)
            detected = time.monotonic()
            ev = next(e for e in pending if e.kind == "deadlock")
            closed = max(max(taps[n].times, default=start) for n in NAMES)   # the last link's last data frame
            # Before the controller acts, with h2 still sending: the ring carries (almost) nothing for 1 s, at most
            # the one frame per link a lapsing propagated pause lets through (at 50 frames/s when moving).
            hold = time.monotonic()
            while time.monotonic() - hold < 1.0:
                pending += events(0.05)
            stalled = {n: taps[n].since(closed) for n in NAMES}
            assert max(stalled.values()) <= 1, f"the ring leaks instead of locking: {stalled}"
            for e in pending:
                manager.handle(e)
            stop_senders()
            assert len(ev.cycle) == 3 and {h.switch_id for h in ev.cycle} == {1, 2, 3}
            assert {(NAMES[h.switch_id - 1], h.port) for h in ev.cycle} == {(n, nxt_port[n][0]) for n in NAMES}
            kind, breaker = actions.get(timeout=5)
            while kind != "break":
                kind, breaker = actions.get(timeout=5)
            assert isinstance(breaker, Breaker) and breaker.kind == "release"
            broken = time.monotonic()
            # Light traffic from here on: the released queue drains, Xon travels back round the ring.
            send(10, 30)
            while not all(taps[n].since(broken) >= 10 for n in NAMES):
                moved: dict[str, Any] = {n: taps[n].since(broken) for n in NAMES}
                if time.monotonic() - broken >= 30:
                    def cnt(n: str, name: str, port: int) -> int:
                        (c,) = clients[n].read_counter(name, port * 8 + LOSSLESS)
                        return int(c.data.packet_count)
                    moved["pfc"] = {n: (cnt(n, "P4inaEgress.pfc_gen.pfc_xoff_tx", prv_port[n]),
                                        cnt(n, "P4inaEgress.pfc_gen.pfc_xon_tx", prv_port[n]),
                                        cnt(n, "P4inaEgress.pfc_gen.pfc_xoff_tx", host_port[n]),
                                        cnt(n, "P4inaEgress.pfc_gen.pfc_xon_tx", host_port[n]),
                                        cnt(n, f"{ING}.pfc.pfc_rx_class", nxt_port[n][0])) for n in NAMES}
                assert time.monotonic() - broken < 30, f"traffic did not resume on every link: {moved}"
                time.sleep(0.05)
            resumed = time.monotonic()
            stop_senders()
            print(f"\nmininet ring deadlock: closed {closed - start:.2f} s after traffic started, reported "
                  f"{(detected - closed) * 1000:.0f} ms after the last ring link stopped (deadlock threshold "
                  f"200 ms), data frames per ring link in the next 1 s while h2 kept sending: {stalled}; {breaker.kind} on {breaker.switch}:{breaker.port} "
                  f"{(broken - hold - 1.0) * 1000:.0f} ms after the controller got the report, every ring link moving again "
                  f"(10 frames each) {(resumed - broken) * 1000:.0f} ms after the release")
            assert manager.tick(time.monotonic() + 1.0)
            assert clients[breaker.switch].read_table(f"{ING}.pfc.pfc_release") == []
        finally:
            stop_senders()
            for tap in taps.values():
                tap.close()
            for c in clients.values():
                c.close()
