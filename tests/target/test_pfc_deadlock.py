"""Deadlock detection on three embedded switches wired in a ring (port 1 towards the next switch, port 2 from the
previous one): when every switch's port 1 stays paused for the lossless class, the probe sent by the first switch
whose pause passes the threshold goes round the ring and back to it, the cycle is reported by digest with its
ports, and controller/pfc.py breaks it on one queue and restores it afterwards."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator

import pytest
from test_pfc_dataplane import LOSSLESS, Rig, data_frame, pfc_frame

from controller.client import entity, update
from controller.pfc import Breaker, Hop, PfcEvent, PfcManager, PortPfc, QueueThresholds, SwitchPfc, decode_digest

NEXT, PREV = 1, 2
RING_MAC = "02:00:00:00:00:99"  # traffic that goes round the ring (out of port 1)
ING, EGR = "P4inaIngress.pfc", "P4inaEgress.pfc_gen"


class Ring:
    def __init__(self, n: int = 3) -> None:
        self.rigs = [Rig(link_bps=1e6, name=f"s{i + 1}") for i in range(n)]
        for i, rig in enumerate(self.rigs):
            nxt, prv = self.rigs[(i + 1) % n], self.rigs[(i - 1) % n]
            rig.switch.add_output_callback(
                lambda port, frame, nxt=nxt, prv=prv: (nxt.switch.inject(PREV, frame) if port == NEXT
                                                       else prv.switch.inject(NEXT, frame) if port == PREV else None))
        self.actions: queue.Queue[tuple[str, object]] = queue.Queue()
        self.manager = PfcManager({r.name: r.client for r in self.rigs}, break_ms=100,
                                  on_event=lambda kind, what: self.actions.put((kind, what)))
        for i, rig in enumerate(self.rigs):
            rig.client.write([update("INSERT", entity(rig.client.p4.table_entry(
                "P4inaIngress.forwarding.l2", {"hdr.ethernet.dst_addr": RING_MAC},
                "P4inaIngress.forwarding.l2_forward", {"port": NEXT})))])
            self.manager.configure(rig.name, SwitchPfc(
                switch_id=i + 1, probe_priority=0,
                ports=(PortPfc(NEXT, link_bps=1e6, detect_ms=10_000, deadlock_ms=5, probe_interval_ms=1),
                       PortPfc(PREV, link_bps=1e6, detect_ms=10_000, deadlock_ms=0)),
                sender_ports=(NEXT, PREV)))

    def pause(self, i: int, quanta: int = 1000) -> None:
        """Switch i's downstream neighbour pauses the lossless class of its port 1 (1000 x 512 us = 512 ms)."""
        self.rigs[i].switch.inject(NEXT, pfc_frame({LOSSLESS: quanta}))

    def deadlock(self, rig: Rig, timeout: float = 10.0) -> PfcEvent:
        deadline = time.monotonic() + timeout
        while True:
            digest = rig.client.digests.get(timeout=max(0.01, deadline - time.monotonic()))
            for ev in decode_digest(rig.name, digest):
                self.manager.handle(ev)
                if ev.kind == "deadlock":
                    return ev

    def close(self) -> None:
        for rig in self.rigs:
            rig.close()


@pytest.fixture
def ring() -> Iterator[Ring]:
    r = Ring()
    yield r
    r.close()


def test_probe_round_the_ring_reports_the_cycle_and_the_controller_breaks_it(ring: Ring) -> None:
    for i in range(3):
        ring.pause(i)
    time.sleep(0.01)              # the deadlock threshold is 5 ms: the next pause frame finds it passed
    ring.pause(0)
    ev = ring.deadlock(ring.rigs[0])
    assert (ev.switch, ev.switch_id, ev.port, ev.classes) == ("s1", 1, NEXT, (LOSSLESS,))
    assert ev.cycle == (Hop(1, NEXT), Hop(2, NEXT), Hop(3, NEXT))
    s1, s2, s3 = ring.rigs
    assert s1.counter(f"{ING}.dl_probes", 0) == 1 and s1.counter(f"{ING}.dl_probes", 2) == 1
    assert s2.counter(f"{ING}.dl_probes", 1) == 1 and s3.counter(f"{ING}.dl_probes", 1) == 1
    # The policy: drop on one queue of the cycle (the lowest switch id's), remove it after break_ms.
    kind, breaker = ring.actions.get(timeout=5)
    while kind != "break":
        kind, breaker = ring.actions.get(timeout=5)
    assert isinstance(breaker, Breaker)
    assert (breaker.switch, breaker.hop, breaker.cls) == ("s1", Hop(1, NEXT), LOSSLESS)
    entries = s1.client.read_table(f"{EGR}.pfc_queue_drop")
    assert len(entries) == 1 and s2.client.read_table(f"{EGR}.pfc_queue_drop") == []
    decoded = s1.client.p4.decode_table_entry(entries[0])
    assert dict(decoded.match) == {"standard_metadata.egress_port": (NEXT,), "meta.pfc.cls": (LOSSLESS,)}
    # The queue drains: what leaves it is dropped instead of going to the switch that cannot take it.
    s1.switch.inject(PREV, data_frame(LOSSLESS, 1, dst=RING_MAC))
    assert s1.switch.wait_idle(10)
    assert s1.counter(f"{EGR}.pfc_queue_drops", NEXT * 8 + LOSSLESS) == 1
    assert ring.manager.tick(time.monotonic() + 1.0)
    assert s1.client.read_table(f"{EGR}.pfc_queue_drop") == []


def test_a_chain_that_ends_is_not_a_deadlock(ring: Ring) -> None:
    ring.pause(0)
    ring.pause(1)                 # s3 is not paused: the probe dies there
    time.sleep(0.01)
    ring.pause(0)
    s1, s2, s3 = ring.rigs
    deadline = time.monotonic() + 10
    while s3.counter(f"{ING}.dl_probes", 3) == 0:
        assert time.monotonic() < deadline, "the probe never reached s3"
        time.sleep(0.02)
    assert s2.counter(f"{ING}.dl_probes", 1) == 1
    assert s1.client.digests.empty() and s1.counter(f"{ING}.dl_probes", 2) == 0



HOST = 3


def test_deadlock_forms_from_traffic_is_detected_broken_and_traffic_resumes() -> None:
    """No injected pause: hosts overload a ring whose routes loop (every switch sends RING_MAC to the next one),
    the rate-limited queues pass Xoff and pause each other into a cycle, a probe sent by traffic reaching a queue
    paused past 200 ms comes back to its origin, and the controller (knowing the links) releases one queue."""
    rigs = [Rig(link_bps=1e6, name=f"s{i + 1}") for i in range(3)]
    sent: dict[tuple[str, int], list[float]] = {}

    def wire(i: int) -> None:
        me, nxt, prv = rigs[i], rigs[(i + 1) % 3], rigs[(i - 1) % 3]

        def out(port: int, frame: bytes) -> None:
            kind = "pfc" if frame[12:14] == b"\x88\x08" else "data"
            sent.setdefault((f"{me.name}:{port}:{kind}", port), []).append(time.monotonic())
            if port == NEXT:
                nxt.switch.inject(PREV, frame)
            elif port == PREV:
                prv.switch.inject(NEXT, frame)

        me.switch.add_output_callback(out)

    links = {(f"s{i + 1}", NEXT): (f"s{(i + 1) % 3 + 1}", PREV) for i in range(3)}
    links |= {(b, bp): (a, ap) for (a, ap), (b, bp) in list(links.items())}
    actions: queue.Queue[tuple[str, object]] = queue.Queue()
    manager = PfcManager({r.name: r.client for r in rigs}, break_ms=500, links=links,
                         on_event=lambda kind, what: actions.put((kind, what)))
    try:
        for i, rig in enumerate(rigs):
            wire(i)
            rig.switch.set_queue_rate(NEXT, 50, LOSSLESS)
            rig.client.write([update("INSERT", entity(rig.client.p4.table_entry(
                "P4inaIngress.forwarding.l2", {"hdr.ethernet.dst_addr": RING_MAC},
                "P4inaIngress.forwarding.l2_forward", {"port": NEXT})))])
            manager.configure(rig.name, SwitchPfc(
                switch_id=i + 1,
                ports=(PortPfc(NEXT, link_bps=1e6, detect_ms=60_000, deadlock_ms=200, probe_interval_ms=100,
                               backlog_xoff=8),),
                thresholds=(QueueThresholds(NEXT, LOSSLESS, xoff=16, xon=4),),
                sender_ports=(NEXT, PREV, HOST)))
        start = time.monotonic()
        ev: PfcEvent | None = None
        k = 0
        while ev is None:
            assert time.monotonic() - start < 30, f"no deadlock; sent: {sorted((k, len(v)) for k, v in sent.items())}"
            for rig in rigs:
                rig.switch.inject(HOST, data_frame(LOSSLESS, k, dst=RING_MAC))
            k += 1
            time.sleep(0.01)                                   # 100 packets/s per host, the queues serve 50
            for rig in rigs:
                while not rig.client.digests.empty():
                    for e in decode_digest(rig.name, rig.client.digests.get()):
                        manager.handle(e)
                        ev = e if e.kind == "deadlock" else ev
        detected = time.monotonic()
        assert ev is not None and len(ev.cycle) == 3 and {h.port for h in ev.cycle} == {NEXT}
        assert {h.switch_id for h in ev.cycle} == {1, 2, 3}
        kind, breaker = actions.get(timeout=5)
        while kind != "break":
            kind, breaker = actions.get(timeout=5)
        assert isinstance(breaker, Breaker)
        assert (breaker.kind, breaker.switch, breaker.port) == ("release", "s2", PREV)
        broken = time.monotonic()
        # Light traffic from here on: the released queue drains into s2, Xon travels back round the ring.
        while not all(any(t > broken for t in sent.get((f"{r.name}:{NEXT}:data", NEXT), [])) for r in rigs):
            assert time.monotonic() - broken < 30, "traffic did not resume on every link"
            for rig in rigs:
                rig.switch.inject(HOST, data_frame(LOSSLESS, k, dst=RING_MAC))
            k += 1
            time.sleep(0.1)
        resumed = time.monotonic()
        paused_at = max(min(sent[(f"{r.name}:{PREV}:pfc", PREV)]) for r in rigs)   # last link to get its Xoff
        print(f"\nring deadlock: formed {paused_at - start:.2f} s after traffic started, reported "
              f"{(detected - paused_at) * 1000:.0f} ms after the cycle closed (threshold 200 ms), released "
              f"{(broken - detected) * 1000:.0f} ms after the report, every link moving again "
              f"{(resumed - broken) * 1000:.0f} ms after the release")
        assert manager.tick(time.monotonic() + 1.0)
        assert rigs[1].client.read_table("P4inaIngress.pfc.pfc_release") == []
    finally:
        for rig in rigs:
            rig.close()
