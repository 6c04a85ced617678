"""The live switch's batch fast path (issue 17): frames taken straight from a port's ring into a batch, and a packet
the traffic manager would hand out next and at once (`TrafficManager.holding_enqueue`) going to egress without
the queues. Both must give exactly what the queued path gives: the reference here is the same switch with the
input buffer (`inject`) and the plain lock-held enqueue + `poll`, on the engine tests' contract program, whose
egress writes the standard metadata it got (instance type, rid, port, length, queue depths) into each frame.
Ports are in-process fakes with a ring's interface, so no root is needed."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from google.protobuf import text_format
from p4.v1 import p4runtime_pb2
from switch_ctlprog import OBS_SIZE, ctl, device_config, observe, p4info
from switch_helpers import PRE

from p4switch.switch import core
from p4switch.switch.core import WORK_BATCH, Switch
from p4switch.switch.entries_file import apply_write_request
from p4switch.switch.tm import TrafficManager


class FakePort:
    """An `AfPacketPort` stand-in: `rx` is what its ring holds, `out` what it sent (bursts flushed)."""

    io = "ring"

    def __init__(self, port: int, ifname: str, io: str = "auto") -> None:
        self.port, self.ifname = port, ifname
        self.rx: list[bytes] = []
        self.out: list[bytes] = []
        self._burst: list[bytes] = []
        self.queue = self._burst.append
        self.rx_frames = self.tx_frames = self.tx_errors = 0
        self._r, self._w = os.pipe()  # never readable: `select` on it only times out

    def describe(self) -> str:
        return "fake ring"

    def fileno(self) -> int:
        return self._r

    def ready(self) -> bool:
        return bool(self.rx)

    def recv_batch(self, limit: int = 64) -> list[bytes]:
        frames, self.rx = self.rx[:limit], self.rx[limit:]
        self.rx_frames += len(frames)
        return frames

    def send(self, frame: bytes) -> None:
        self.out.append(frame)

    def flush(self) -> None:
        self.out.extend(self._burst)
        self._burst.clear()

    def ring_stats(self) -> dict[str, int]:
        return {}

    def close(self) -> None:
        os.close(self._r)
        os.close(self._w)


@pytest.fixture
def fake_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "AfPacketPort", FakePort)


def make_switch(ports: int = 4) -> Switch:
    sw = Switch(priority_queues=2, queue_depth=1024)
    sw.install_pipeline(p4info(), device_config())
    apply_write_request(sw.state, text_format.Parse(PRE, p4runtime_pb2.WriteRequest()))
    for p in range(1, ports + 1):
        sw.add_interface(p, f"fake{p}")
    sw._running = True  # driven by the test thread (no worker), so every step is deterministic
    return sw


def port(sw: Switch, n: int) -> FakePort:
    p = sw._ports[n]
    assert isinstance(p, FakePort)
    return p


def busy(sw: Switch) -> bool:
    return bool(sw._inflight or len(sw.tm) or any(port(sw, n).rx for n in sw._ports))


def run_fast(sw: Switch, frames: list[tuple[int, bytes]]) -> None:
    """Frames into the ports' rings, then worker turns until everything has left."""
    for n, frame in frames:
        port(sw, n).rx.append(frame)
    while busy(sw):
        sw._work_once()


def run_queued(sw: Switch, frames: list[tuple[int, bytes]]) -> None:
    """The reference: every frame through the input buffer and every packet through the queues."""
    sw._hold_enqueue = sw.tm.enqueue_locked
    for n, frame in frames:
        sw.inject(n, frame)
    while busy(sw):
        sw._run_batch(WORK_BATCH)


def outputs(sw: Switch) -> dict[int, list[tuple[bytes, dict[str, int]]]]:
    """Per port, each frame with its observation header, the one timing-dependent field (deq_timedelta) left out."""
    out: dict[int, list[tuple[bytes, dict[str, int]]]] = {}
    for n in sorted(sw._ports):
        frames = port(sw, n).out
        out[n] = [(f[:8] + f[8 + OBS_SIZE:], {k: v for k, v in observe(f).items() if k != "deq_timedelta"})
                  for f in frames]
    return out


def random_frames(seed: int, count: int) -> list[tuple[int, bytes]]:
    rng = random.Random(seed)
    frames = []
    for i in range(count):
        kind = rng.choice(("unicast", "unicast", "unicast", "mcast", "i2e", "e2e", "resub", "recirc", "drop"))
        kw: dict[str, int] = {"port": rng.randrange(1, 5), "priority": rng.choice((0, 0, 1))}
        if kind == "mcast":
            kw["mcast"] = 1
        elif kind == "i2e":
            kw["i2e"] = 5
        elif kind == "e2e":
            kw["e2e"] = 5
        elif kind == "resub":
            kw["resubmit"] = rng.randrange(1, 3)
        elif kind == "recirc":
            kw["recirc"] = rng.randrange(1, 3)
        elif kind == "drop":
            kw["flags"] = 1
        frames.append((rng.randrange(1, 5), ctl(payload=i.to_bytes(4, "big"), **kw)))
    return frames


def test_ring_batches_with_held_packets_equal_the_queued_path(fake_ports: None) -> None:
    """Unicast, multicast, I2E and E2E clones, resubmit, recirculate, egress drops and two priorities, in bursts of
    every size: the same frames per port, in the same order, with the same metadata and counters."""
    frames = random_frames(17, 400)
    rng = random.Random(5)
    chunks: list[list[tuple[int, bytes]]] = []  # bursts from one port each (ports' rings are read one by one)
    while frames:
        size, port_n = rng.choice((1, 2, 7, 31, 64, 90)), rng.randrange(1, 5)
        chunks.append([(port_n, f) for _, f in frames[:size]])
        frames = frames[size:]
    runs = []
    for fast in (True, False):
        sw = make_switch()
        try:
            for chunk in chunks:
                (run_fast if fast else run_queued)(sw, chunk)
            counters = dict(vars(sw.engine.counters))
            queues = [(q.port, q.priority, q.enqueued, q.dropped) for q in sw.tm.stats()]
            runs.append((outputs(sw), counters, queues))
        finally:
            sw.stop()
    fast_run, queued_run = runs
    assert fast_run == queued_run
    counters = fast_run[1]
    assert counters["replicated"] and counters["cloned"] and counters["resubmitted"] and counters["recirculated"]
    assert sum(len(v) for v in fast_run[0].values()) > 400


def test_a_clone_held_first_still_leaves_after_a_higher_priority_original(fake_ports: None) -> None:
    """An I2E clone (metadata zeroed: priority 0) is the pass's first packet, so it is held; the original, priority
    1 on the same port, comes second: the held clone must go into its queue, and the queues serve priority 1
    first, as they would have without holding. Unicast packets alone never touch the queues."""
    sw = make_switch()
    polled: list[int] = []
    poll = sw.tm.poll_locked

    def counting_poll() -> Any:
        got, wake = poll()
        if got is not None:
            polled.append(got[0])
        return got, wake

    sw.tm.poll_locked = counting_poll  # type: ignore[method-assign]
    try:
        run_fast(sw, [(1, ctl(port=2))])
        assert polled == [2]  # the first packet for a queue makes it, through the queues
        polled.clear()
        run_fast(sw, [(1, ctl(port=2)) for _ in range(20)])
        assert polled == [] and len(port(sw, 2).out) == 21
        assert all(observe(f)["enq_qdepth"] == observe(f)["deq_qdepth"] == 0 for f in port(sw, 2).out)
        run_fast(sw, [(1, ctl(port=4)), (1, ctl(port=3))])  # the queues of ports 3 and 4 exist from here on
        polled.clear()
        run_fast(sw, [(1, ctl(port=4, i2e=5, priority=1))])
        original, clone = (observe(f) for f in port(sw, 4).out[1:])
        assert (original["instance_type"], clone["instance_type"]) == (0, 1)
        assert polled == [4, 4]
    finally:
        sw.stop()


def test_frames_a_batch_has_no_room_for_join_the_input_buffer_in_order(fake_ports: None) -> None:
    """A burst longer than a batch's budget (the budget counts ingress and egress passes): what the batch did not
    reach goes into the input buffer behind what was there, and every frame leaves once, in order."""
    sw = make_switch(ports=1)
    try:
        size = WORK_BATCH * 3 // 4  # frames a burst holds: each is two passes, so the budget runs out first
        frames = [ctl(port=1, payload=i.to_bytes(4, "big")) for i in range(3 * size)]
        bursts = [frames[i:i + size] for i in range(0, 3 * size, size)]
        for burst in bursts:
            sw._run_batch(WORK_BATCH, 1, burst)
        assert sw._input_lo  # the budget ran out before the bursts did
        run_fast(sw, [])
        assert [f[-4:] for f in port(sw, 1).out] == [i.to_bytes(4, "big") for i in range(3 * size)]
    finally:
        sw.stop()


def test_paused_zero_depth_and_rate_limited_queues_are_not_bypassed(fake_ports: None) -> None:
    sw = make_switch()
    try:
        run_fast(sw, [(1, ctl(port=n)) for n in (2, 3, 4)])  # the queues exist from here on
        base = {n: len(port(sw, n).out) for n in (2, 3, 4)}
        sw.set_queue_depth(3, 0)
        sw.pause_queue(2, 0, 30.0)
        for _ in range(5):
            port(sw, 1).rx.append(ctl(port=2))
            port(sw, 1).rx.append(ctl(port=3))
        while any(port(sw, n).rx for n in sw._ports):
            sw._work_once()
        assert len(port(sw, 2).out) == base[2] and sw.tm.depth(2) == 5  # paused: held in its queue
        assert len(port(sw, 3).out) == base[3] and sw.engine.counters.dropped_queue_full == 5  # no room
        sw.pause_queue(2, 0, 0.0)
        run_fast(sw, [])
        assert len(port(sw, 2).out) == base[2] + 5
        assert [observe(f)["enq_qdepth"] for f in port(sw, 2).out[base[2]:]] == [0, 1, 2, 3, 4]
        # a rate-limited queue spaces its packets (0.25 s apart): the second and third wait behind the first
        sw.set_queue_rate(4, 4.0)
        run_fast(sw, [(1, ctl(port=4)) for _ in range(3)])
        shaped = [observe(f) for f in port(sw, 4).out[base[4]:]]
        assert [(o["enq_qdepth"], o["deq_qdepth"]) for o in shaped] == [(0, 0), (0, 1), (1, 0)]
    finally:
        sw.stop()


class FakeNs:
    def __init__(self) -> None:
        self.ns = 5_000_000_000

    def __call__(self) -> int:
        return self.ns


class Item:
    def __init__(self, name: str) -> None:
        self.name = name
        self.enq_timestamp = self.enq_qdepth = -1


Out = list[tuple[int, int, str, int, int, int]]


def drain(tm: TrafficManager, out: Out) -> None:
    while True:
        got, _ = tm.poll_locked()
        if got is None:
            return
        port, prio, item, depth = got
        out.append((port, prio, item.name, depth, item.enq_qdepth, item.enq_timestamp))


def test_holding_enqueue_gives_what_enqueue_and_poll_give() -> None:
    """A scripted run of passes (each a few enqueues, as one ingress or egress makes them) through two identical
    managers on one clock: one with `holding_enqueue`, whose held packet leaves right after its pass (as the
    switch's batch runs it, with dequeue depth 0), the other with the plain enqueue and `poll`. The same packets,
    order, queues, depths and stamps; the held path is taken exactly where the queues were empty and the packet's
    queue existed, unshaped, unpaused and with room."""
    clock = FakeNs()
    epoch = 1_000_000_000
    tms = [TrafficManager(priority_queues=2, clock_ns=clock, epoch_ns=epoch, refused_port=511) for _ in range(2)]
    held: list[Any] = []
    enqueues = [tms[0].holding_enqueue(held), tms[1].enqueue_locked]
    passes: list[list[tuple[str, int, int]]] = [
        [("q", 1, 0)],  # 0: the first packet for its queue is queued (queues are made in the same order)
        [("q", 1, 0)], [("q", 1, 0)],  # 1, 2: held
        [("q", 2, 0)], [("q", 2, 0)],  # 3: a new queue; 4: held
        [("q", 1, 0), ("q", 1, 1)],  # 5: held, then a new queue of higher priority: the held one is put back
        [("q", 1, 1), ("q", 2, 1), ("q", 1, 1)],  # 6: a multicast-like pass: held, put back, queued
        [("q", 2, 1)],  # 7: held
        [("q", 511, 0)],  # 8: the refused port
        [("pause", 2, 0), ("q", 2, 0)],  # 9: paused: it waits in its queue
        [("q", 1, 0)],  # 10: not alone in the queues
        [("resume", 2, 0)],  # 11: the paused packet leaves
        [("q", 2, 0)],  # 12: held
        [("rate", 1, 0), ("q", 1, 0)], [("q", 1, 0)],  # 13, 14: a shaped queue
        [("depth0", 2, 0), ("q", 2, 1)],  # 15: held (priority 1 still has room)
        [("q", 2, 0)],  # 16: no room: dropped
    ]
    outs: list[Out] = [[], []]
    taken: list[int] = []
    for i, script in enumerate(passes):
        clock.ns += 1000 * (i + 1)
        for which, (tm, enqueue) in enumerate(zip(tms, enqueues, strict=True)):
            for n, (op, port, prio) in enumerate(script):
                if op == "pause":
                    tm.pause(port, prio, 100.0)
                elif op == "resume":
                    tm.pause(port, prio, 0.0)
                elif op == "rate":
                    tm.set_queue_rate(port, 1e9, prio)
                elif op == "depth0":
                    tm.set_queue_depth(port, 0, prio)
                else:
                    enqueue(port, prio, Item(f"{i}.{n}"))
            while held:
                port, item, q, _departure = held.pop()
                taken.append(i)
                outs[which].append((port, q.priority, item.name, 0, item.enq_qdepth, item.enq_timestamp))
            drain(tm, outs[which])
    assert outs[0] == outs[1]
    assert taken == [1, 2, 4, 7, 12, 15]
    assert len(outs[0]) == 17  # every packet but the refused and the dropped one
    assert outs[0][1] == (1, 0, "1.0", 0, 0, (5_000_000_000 + 1000 + 2000 - epoch) // 1000)
    assert [(s.enqueued, s.dropped) for s in tms[0].stats()] == [(s.enqueued, s.dropped) for s in tms[1].stats()]


def test_output_callbacks_and_the_cpu_port_run_outside_the_queue_lock(fake_ports: None) -> None:
    """A callback may reach another switch whose worker is inside its own batch (an emulated link injecting a PFC
    frame that pauses a queue), and that worker may do the same to us: frames that leave through callbacks or the
    CPU port are sent after the batch's passes, when the traffic manager's lock is free again for other threads."""
    import threading

    sw = make_switch(ports=2)
    sw.cpu_port = 64
    free: list[bool] = []

    def lock_free_elsewhere(*_: object) -> None:
        got: list[bool] = []

        def probe() -> None:
            ok = sw.tm.lock.acquire(timeout=0.5)
            got.append(ok)
            if ok:
                sw.tm.lock.release()

        t = threading.Thread(target=probe)
        t.start()
        t.join()
        free.append(got[0])

    try:
        sw.packet_in_sink = lock_free_elsewhere
        run_fast(sw, [(1, ctl(port=64)) for _ in range(3)])  # the fast path: the CPU port has no burst queue
        assert free == [True] * 3
        sw.add_output_callback(lock_free_elsewhere)
        run_fast(sw, [(1, ctl(port=2)) for _ in range(3)])
        assert free == [True] * 6 and len(port(sw, 2).out) == 3
    finally:
        sw.stop()
