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
from controller.pfc import Breaker, Hop, PfcEvent, PfcManager, PortPfc, SwitchPfc, decode_digest

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
    assert isinstance(breaker, Breaker) and (breaker.switch, breaker.hop, breaker.cls) == ("s1", Hop(1, NEXT), LOSSLESS)
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

