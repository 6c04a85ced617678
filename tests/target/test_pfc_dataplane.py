"""PFC in p4src/p4ina.p4 on the embedded target, configured by controller/pfc.py over a real P4Runtime server:
Xoff and Xon at their thresholds, a received pause holding one class for the time it grants, malformed pause
frames dropped and counted, the watchdog's storm detection, drop action and restoration, and holding by
recirculation for targets whose MAC ignores pause."""

from __future__ import annotations

import queue
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aggnet import compiled_program
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

import p4switch.server.server as server_mod
from controller.client import SwitchClient, entity, update
from controller.pfc import (
    DIGEST,
    PfcEvent,
    PfcManager,
    PortPfc,
    QueueThresholds,
    SwitchPfc,
    decode_digest,
    quantum_x65536,
)

ING = "P4inaIngress"
IN_PORT, OUT_PORT, OTHER_PORT = 1, 2, 3
LOSSLESS, BULK = 3, 5          # priorities of the two classes used
DSCP = {LOSSLESS: 26, BULK: 10}
PFC_DST = bytes.fromhex("0180c2000001")
HOST_MAC = "02:00:00:00:00:01"
DST_MAC = "02:00:00:00:00:02"


def pfc_frame(pauses: dict[int, int], *, dst: bytes = PFC_DST, reserved: int = 0, opcode: int = 0x0101) -> bytes:
    enable, quanta = 0, [0] * 8
    for cls, q in pauses.items():
        enable |= 1 << cls
        quanta[cls] = q
    body = struct.pack(">HBB8H", opcode, reserved, enable, *quanta)
    return (dst + bytes.fromhex("020000000009") + b"\x88\x08" + body).ljust(60, b"\x00")


def data_frame(cls: int, seq: int, dst: str = DST_MAC) -> bytes:
    pkt = Ether(src=HOST_MAC, dst=dst) / IP(src="10.0.0.1", dst="10.0.0.2", tos=DSCP[cls] << 2) / UDP(
        sport=1000 + cls, dport=2000) / struct.pack(">I", seq)
    return bytes(pkt)


def parse_pfc(frame: bytes) -> tuple[int, list[int]] | None:
    """(class-enable vector, 8 pause times) of a PFC frame, else None."""
    if frame[12:14] != b"\x88\x08" or frame[14:16] != b"\x01\x01":
        return None
    assert frame[0:6] == PFC_DST and len(frame) >= 60
    enable = int.from_bytes(frame[16:18], "big")
    return enable, list(struct.unpack(">8H", frame[18:34]))


class Rig:
    """One embedded switch running p4ina.p4 with 8 priority queues, its P4Runtime server, a controller client and
    a PfcManager; every frame leaving any port is recorded in order."""

    def __init__(self, *, link_bps: float = 10e9, honor_pfc: bool = True, name: str = "s1") -> None:
        from p4switch.switch.core import Switch

        p4info, config = compiled_program()
        self.switch = Switch(device_id=0, priority_queues=8, link_bps=link_bps, honor_pfc=honor_pfc)
        self.out: queue.Queue[tuple[int, bytes, float]] = queue.Queue()
        self.switch.add_output_callback(lambda port, frame: self.out.put((port, frame, time.monotonic())))
        self.switch.start()
        self.server = server_mod.P4RuntimeServer(self.switch, address="127.0.0.1:0").start()
        self.name = name
        self.client = SwitchClient(name, f"127.0.0.1:{self.server.port}", timeout=10).connect()
        self.client.set_pipeline(p4info, config)
        self.manager = PfcManager({name: self.client})
        p4 = self.client.p4
        for cls, dscp in DSCP.items():
            self.client.write([update("INSERT", entity(p4.table_entry(
                f"{ING}.qos.dscp_priority", {"hdr.ipv4.dscp": dscp}, f"{ING}.qos.set_priority", {"prio": cls})))])
        for mac, port in ((DST_MAC, OUT_PORT), ("01:80:c2:00:00:01", OTHER_PORT), ("01:80:c2:00:00:02", OTHER_PORT)):
            self.client.write([update("INSERT", entity(p4.table_entry(
                f"{ING}.forwarding.l2", {"hdr.ethernet.dst_addr": mac}, f"{ING}.forwarding.l2_forward",
                {"port": port})))])

    def configure(self, cfg: SwitchPfc) -> None:
        self.manager.configure(self.name, cfg)

    def counter(self, name: str, index: int) -> int:
        (c,) = self.client.read_counter(name, index)
        return int(c.data.packet_count)

    def register(self, name: str, index: int) -> int:
        e = entity(self.client.p4.register_entry(name, index))
        (r,) = self.client.read([e])
        return int.from_bytes(r.register_entry.data.bitstring, "big")

    def frames(self, wait: float = 0.0) -> list[tuple[int, bytes, float]]:
        """Everything sent so far (after waiting up to `wait` seconds for the first frame if none yet)."""
        got = []
        try:
            got.append(self.out.get(timeout=wait) if wait else self.out.get_nowait())
            while True:
                got.append(self.out.get_nowait())
        except queue.Empty:
            pass
        return got

    def until(self, pred: Any, timeout: float = 10.0) -> list[tuple[int, bytes, float]]:
        """Collect output frames until `pred(frames)` holds; fail after `timeout`."""
        got: list[tuple[int, bytes, float]] = []
        deadline = time.monotonic() + timeout
        while not pred(got):
            assert time.monotonic() < deadline, f"condition not met; got {[(p, f[:16].hex()) for p, f, _ in got]}"
            got += self.frames(wait=0.05)
        return got

    def pause_until_storm(self, timeout: float = 10.0) -> list[PfcEvent]:
        """Keep sending full-length pauses for the lossless class into OUT_PORT until the watchdog reports a storm;
        the events of that report."""
        storm: list[PfcEvent] = []
        deadline = time.monotonic() + timeout
        while not storm:
            assert time.monotonic() < deadline, "no storm reported"
            self.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0xFFFF}))
            try:
                storm = decode_digest(self.name, self.client.digests.get(timeout=0.005))
            except queue.Empty:
                pass
        return storm

    def events(self, n: int, timeout: float = 10.0) -> list[PfcEvent]:
        out: list[PfcEvent] = []
        deadline = time.monotonic() + timeout
        while len(out) < n:
            left = deadline - time.monotonic()
            assert left > 0, f"only {len(out)} PFC events: {out}"
            try:
                digest = self.client.digests.get(timeout=left)
            except queue.Empty:
                continue
            assert self.client.p4.digest_name(digest.digest_id) == DIGEST
            out += decode_digest(self.name, digest)
        return out

    def close(self) -> None:
        self.client.close()
        self.server.stop(grace=0)
        self.switch.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


@pytest.fixture
def slow_rig() -> Iterator[Rig]:
    """1 Mb/s links: a pause quantum lasts 512 us, so pauses are long enough to observe."""
    r = Rig(link_bps=1e6)
    yield r
    r.close()


def _fill_and_drain(rig: Rig, n: int) -> list[tuple[int, bytes, float]]:
    """n lossless-class packets wait in OUT_PORT's paused queue, then drain at 10 packets/s; returns the output.

    Departure times are fixed at enqueue (100 ms apart), so once the queue is full and released, each packet leaves
    alone and any PFC frame its departure causes leaves before the next one."""
    sw = rig.switch
    sw.set_queue_rate(OUT_PORT, 10, LOSSLESS)
    sw.pause_queue(OUT_PORT, LOSSLESS, 30.0)
    for i in range(n):
        sw.inject(IN_PORT, data_frame(LOSSLESS, i))
    deadline = time.monotonic() + 10
    while sw.tm.depth(OUT_PORT, LOSSLESS) < n:
        assert time.monotonic() < deadline, "packets did not reach the queue"
        time.sleep(0.01)
    sw.pause_queue(OUT_PORT, LOSSLESS, 0)
    return rig.until(lambda got: sum(p == OUT_PORT for p, _, _ in got) == n
                     and any(parse_pfc(f) and parse_pfc(f)[1][LOSSLESS] == 0 for _, f, _ in got))  # type: ignore[index]


def test_xoff_and_xon_at_their_thresholds(rig: Rig) -> None:
    rig.configure(SwitchPfc(switch_id=1, thresholds=(QueueThresholds(OUT_PORT, LOSSLESS, xoff=9, xon=3,
                                                                     quanta=1234),),
                            port_macs={IN_PORT: 0x02_00_00_00_AA_01}))
    got = _fill_and_drain(rig, 10)
    # Order of departures: data k leaves with 10 - k packets behind it (deq_qdepth).
    seq = [("data" if p == OUT_PORT else parse_pfc(f), p) for p, f, _ in got]
    pfc = [(i, s, p) for i, (s, p) in enumerate(seq) if s != "data"]
    assert [(s, p) for _, s, p in pfc] == [((1 << LOSSLESS, [0, 0, 0, 1234, 0, 0, 0, 0]), IN_PORT),
                                           ((1 << LOSSLESS, [0] * 8), IN_PORT)]
    data_before = [sum(s == "data" for s, _ in seq[:i]) for i, _, _ in pfc]
    assert data_before == [1, 7], "Xoff when 9 packets are left (>= xoff 9), Xon when 3 are left (<= xon 3)"
    xoff_frame = next(f for p, f, _ in got if p == IN_PORT)
    # Ethernet + PFC + zero padding to 60 bytes; the sender's unparsed payload may follow (docs/pfc.md).
    assert xoff_frame[6:12] == bytes.fromhex("02000000aa01") and xoff_frame[34:60] == bytes(26)
    assert rig.counter("P4inaEgress.pfc_gen.pfc_xoff_tx", IN_PORT * 8 + LOSSLESS) == 1
    assert rig.counter("P4inaEgress.pfc_gen.pfc_xon_tx", IN_PORT * 8 + LOSSLESS) == 1


def test_no_xoff_below_the_threshold(rig: Rig) -> None:
    rig.configure(SwitchPfc(switch_id=1, thresholds=(QueueThresholds(OUT_PORT, LOSSLESS, xoff=10, xon=3),)))
    sw = rig.switch
    sw.pause_queue(OUT_PORT, LOSSLESS, 30.0)
    for i in range(10):
        sw.inject(IN_PORT, data_frame(LOSSLESS, i))
    while sw.tm.depth(OUT_PORT, LOSSLESS) < 10:
        time.sleep(0.01)
    sw.pause_queue(OUT_PORT, LOSSLESS, 0)
    assert sw.wait_idle(10)
    got = rig.frames()
    assert sum(p == OUT_PORT for p, _, _ in got) == 10
    assert not [f for p, f, _ in got if parse_pfc(f)], "the deepest departure left 9 packets: below xoff 10"


def test_received_pause_holds_only_its_class_for_the_quanta(slow_rig: Rig) -> None:
    rig = slow_rig
    rig.configure(SwitchPfc(switch_id=1, ports=(PortPfc(OUT_PORT, link_bps=1e6, deadlock_ms=0),)))
    idx = OUT_PORT * 8 + LOSSLESS
    start = time.monotonic()
    rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 400}))       # 400 x 512 us = 204.8 ms
    rig.switch.inject(IN_PORT, data_frame(LOSSLESS, 1))
    rig.switch.inject(IN_PORT, data_frame(BULK, 2))
    got = rig.until(lambda g: len(g) >= 2)
    (bulk_port, bulk, _), (lossless_port, lossless, left) = got
    assert bulk_port == lossless_port == OUT_PORT
    assert bulk[-4:] == struct.pack(">I", 2) and lossless[-4:] == struct.pack(">I", 1), "the bulk class was not held"
    assert left - start >= 0.2048, "the paused class left before its pause ended"
    assert rig.register(f"{ING}.pfc.pfc_paused_us", idx) == 204800
    assert rig.counter(f"{ING}.pfc.pfc_rx_class", idx) == 1
    assert rig.counter(f"{ING}.pfc.pfc_rx_class", OUT_PORT * 8 + BULK) == 0
    assert rig.counter(f"{ING}.qos.pfc_rx", OUT_PORT) == 1
    assert not [f for _, f, _ in got if parse_pfc(f)], "received PFC frames end at the link"


def test_xon_ends_the_pause_and_the_granted_time(slow_rig: Rig) -> None:
    rig = slow_rig
    rig.configure(SwitchPfc(switch_id=1, ports=(PortPfc(OUT_PORT, link_bps=1e6, deadlock_ms=0),)))
    idx = OUT_PORT * 8 + LOSSLESS
    rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0xFFFF}))    # 33.5 s
    rig.switch.inject(IN_PORT, data_frame(LOSSLESS, 1))
    assert rig.frames(wait=0.2) == []
    rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0}))
    (port, frame, _), = rig.until(lambda g: len(g) >= 1)
    assert port == OUT_PORT and frame[-4:] == struct.pack(">I", 1)
    paused = rig.register(f"{ING}.pfc.pfc_paused_us", idx)
    assert 0 < paused < 33_554_432 // 2, "Xon takes back the part of the grant not used"
    assert rig.counter(f"{ING}.pfc.pfc_rx_class", idx) == 2


def test_malformed_pause_frames_are_dropped_and_counted() -> None:
    rig = Rig(honor_pfc=False)
    try:
        rig.configure(SwitchPfc(switch_id=1))
        bad = [
            pfc_frame({LOSSLESS: 100}, dst=bytes.fromhex("0180c2000002")),   # not the MAC control address
            pfc_frame({LOSSLESS: 100}, reserved=0x01),                       # upper octet of the enable vector
            pfc_frame({LOSSLESS: 100}, opcode=0x0001),                       # 802.3x PAUSE: not a PFC frame
            pfc_frame({LOSSLESS: 100})[:24],                                 # truncated inside the pause times
        ]
        for frame in bad:
            rig.switch.inject(IN_PORT, frame)
        rig.switch.inject(IN_PORT, pfc_frame({LOSSLESS: 100}))               # a good one, for contrast
        assert rig.switch.wait_idle(10)
        assert rig.frames() == [], "MAC control frames are never forwarded"
        assert rig.counter(f"{ING}.pfc.pfc_malformed", IN_PORT) == len(bad)
        assert rig.counter(f"{ING}.pfc.pfc_rx_class", IN_PORT * 8 + LOSSLESS) == 1
    finally:
        rig.close()


def test_watchdog_storm_drop_and_restoration(rig: Rig) -> None:
    rig.configure(SwitchPfc(
        switch_id=7,
        # Pause propagation on: a stormed queue whose traffic is dropped must still not pause its senders.
        ports=(PortPfc(OUT_PORT, link_bps=1e9, detect_ms=30, restore_ms=60, action="drop", deadlock_ms=0,
                       backlog_xoff=1),),
        thresholds=(QueueThresholds(OUT_PORT, LOSSLESS, xoff=2, xon=1),)))
    idx = OUT_PORT * 8 + LOSSLESS
    # A storm: pause frames keep coming (each pauses 33 ms at 1 Gb/s) until the watchdog reports it.
    storm = rig.pause_until_storm()
    (ev,) = storm
    assert (ev.kind, ev.switch_id, ev.port, ev.classes) == ("storm", 7, OUT_PORT, (LOSSLESS,))
    rig.manager.handle(ev)
    assert rig.manager.storms == {("s1", OUT_PORT, LOSSLESS)}
    assert rig.counter(f"{ING}.pfc.pfcwd_storms", idx) == 1
    # Drop action: the stormed class is dropped, the other class passes, nothing is paused upstream.
    for i in range(5):
        rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0xFFFF}))
        rig.switch.inject(IN_PORT, data_frame(LOSSLESS, i))
        rig.switch.inject(IN_PORT, data_frame(BULK, 100 + i))
    got = rig.until(lambda g: sum(p == OUT_PORT for p, _, _ in g) >= 5)
    assert all(f[-4:] >= struct.pack(">I", 100) for p, f, _ in got if p == OUT_PORT)
    assert rig.counter(f"{ING}.pfc.pfcwd_dropped", idx) == 5
    assert not [p for p, f, _ in got if p == IN_PORT], "the storm does not spread upstream"
    # Restoration: no pause for restore_ms; the next packet for the queue ends the storm and is forwarded.
    time.sleep(0.08)
    rig.switch.inject(IN_PORT, data_frame(LOSSLESS, 42))
    (restore,) = rig.events(1)
    assert (restore.kind, restore.port, restore.classes) == ("restore", OUT_PORT, (LOSSLESS,))
    rig.manager.handle(restore)
    assert rig.manager.storms == set()
    got = rig.until(lambda g: any(p == OUT_PORT for p, _, _ in g))
    assert [f[-4:] for p, f, _ in got if p == OUT_PORT] == [struct.pack(">I", 42)]
    assert rig.counter(f"{ING}.pfc.pfcwd_restores", idx) == 1


def test_alert_action_reports_but_keeps_pausing(rig: Rig) -> None:
    rig.configure(SwitchPfc(switch_id=7, ports=(PortPfc(OUT_PORT, link_bps=1e9, detect_ms=20, action="alert",
                                                        deadlock_ms=0),)))
    rig.pause_until_storm()
    rig.switch.inject(IN_PORT, data_frame(LOSSLESS, 1))
    got = rig.until(lambda g: len(g) >= 1)       # held by the MAC for at most 3.3 ms, then sent: not dropped
    assert [p for p, _, _ in got] == [OUT_PORT]
    assert rig.counter(f"{ING}.pfc.pfcwd_dropped", OUT_PORT * 8 + LOSSLESS) == 0


def test_hold_by_recirculation_when_the_mac_ignores_pause() -> None:
    """BMv2 mode: the MAC does not pause, the program holds the class by recirculating within a budget."""
    rig = Rig(link_bps=1e6, honor_pfc=False)
    try:
        rig.configure(SwitchPfc(switch_id=1, ports=(PortPfc(OUT_PORT, link_bps=1e6, deadlock_ms=0,
                                                            hold_limit=50),)))
        idx = OUT_PORT * 8 + LOSSLESS
        rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0xFFFF}))
        rig.switch.inject(IN_PORT, data_frame(BULK, 2))
        rig.switch.inject(IN_PORT, data_frame(LOSSLESS, 1))
        assert rig.switch.wait_idle(10)
        got = rig.frames()
        assert [(p, f[-4:]) for p, f, _ in got] == [(OUT_PORT, struct.pack(">I", 2))]
        assert rig.counter(f"{ING}.pfc.pfc_held", idx) == 50
        assert rig.counter(f"{ING}.pfc.pfc_hold_drops", idx) == 1, "the budget is bounded"
        # After Xon a held packet goes out on its first pass, unchanged.
        rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0}))
        sent = data_frame(LOSSLESS, 3)
        rig.switch.inject(IN_PORT, sent)
        assert rig.switch.wait_idle(10)
        assert [(p, f) for p, f, _ in rig.frames()] == [(OUT_PORT, sent)]
    finally:
        rig.close()


def test_quantum_fixed_point() -> None:
    assert quantum_x65536(10e9) == 3355 and quantum_x65536(1e6) == 512 * 65536


def test_forward_action_stops_holding_in_hold_mode() -> None:
    """SONiC's forward action ignores the storming pause: with the program holding (BMv2 mode), a stormed queue's
    packets go out at once instead of recirculating."""
    rig = Rig(honor_pfc=False)
    try:
        rig.configure(SwitchPfc(switch_id=1, ports=(PortPfc(OUT_PORT, link_bps=1e9, detect_ms=20, action="forward",
                                                            deadlock_ms=0, hold_limit=50),)))
        idx = OUT_PORT * 8 + LOSSLESS
        rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0xFFFF}))
        rig.switch.inject(IN_PORT, data_frame(LOSSLESS, 1))
        assert rig.switch.wait_idle(10)
        assert rig.frames() == [] and rig.counter(f"{ING}.pfc.pfc_held", idx) == 50, "paused, not yet a storm: held"
        rig.pause_until_storm()
        rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0xFFFF}))
        sent = data_frame(LOSSLESS, 2)
        rig.switch.inject(IN_PORT, sent)
        assert rig.switch.wait_idle(10)
        assert [(p, f) for p, f, _ in rig.frames()] == [(OUT_PORT, sent)]
        assert rig.counter(f"{ING}.pfc.pfc_held", idx) == 50
    finally:
        rig.close()


def test_a_paused_queue_pauses_its_senders_after_the_backlog(slow_rig: Rig) -> None:
    """Pause propagation: the 3rd packet reaching a paused queue (backlog_xoff = 3) pauses its sender, once per half
    pause time."""
    rig = slow_rig
    rig.configure(SwitchPfc(switch_id=1, ports=(PortPfc(OUT_PORT, link_bps=1e6, deadlock_ms=0, backlog_xoff=3,
                                                        backlog_quanta=777),), sender_ports=(IN_PORT,)))
    rig.switch.inject(OUT_PORT, pfc_frame({LOSSLESS: 0xFFFF}))        # 33.5 s
    for i in range(2):
        rig.switch.inject(IN_PORT, data_frame(LOSSLESS, i))
    assert rig.frames(wait=0.2) == [], "two packets: below the backlog"
    for i in range(2, 5):
        rig.switch.inject(IN_PORT, data_frame(LOSSLESS, i))
    got = rig.until(lambda g: len(g) >= 1)
    got += rig.frames(wait=0.2)
    assert [(p, parse_pfc(f)) for p, f, _ in got] == [(IN_PORT, (1 << LOSSLESS, [0, 0, 0, 777, 0, 0, 0, 0]))]
