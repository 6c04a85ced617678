"""A pause storm on a Mininet fabric: h2 sends continuous PFC frames to its switch (a live embedded switch process
on veths, programmed over P4Runtime by controller/pfc.py); the watchdog reports the storm, drops h1's traffic to
h2 instead of letting it pile up and pause h1, and reports restoration once the storm stops. Detection and
restoration times are printed (pytest -s) for the report."""

from __future__ import annotations

import importlib
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration]

for _module in ("p4switch.compiler", "p4switch.switch_cli", "p4fabric.fabric"):
    importlib.import_module(_module)  # a missing layer is an error, never a skip (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]
ING, EGR = "P4inaIngress", "P4inaEgress"
H1_PORT, H2_PORT, CLS = 1, 2, 0

# Runs in h2: a PFC frame pausing class 0 for 65535 quanta (3.3 ms at 10 Gb/s) every millisecond.
STORM = """
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = (bytes.fromhex("0180c2000001000000000002") + b"\\x88\\x08"
         + struct.pack(">HBB8H", 0x0101, 0, 1, 0xFFFF, 0, 0, 0, 0, 0, 0, 0)).ljust(60, b"\\x00")
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    s.send(frame)
    time.sleep(0.001)
"""


def _ping(host: object, count: int) -> int:
    """Echo replies h1 got from h2."""
    out = host.cmd(f"ping -c {count} -i 0.05 -W 1 10.0.0.2")  # type: ignore[attr-defined]
    for line in out.splitlines():
        if "received" in line:
            return int(line.split(",")[1].split()[0])
    raise AssertionError(f"no ping summary: {out}")


def test_pause_storm_is_detected_contained_and_restored(tmp_path: Path) -> None:
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    from controller.client import SwitchClient, entity, update
    from controller.pfc import PfcManager, PortPfc, QueueThresholds, SwitchPfc, decode_digest
    from p4switch.compiler import compile_file

    compiled = compile_file(str(REPO / "p4src" / "p4ina.p4"))
    fabric = Fabric(parse_topo_spec("single,2"), target="embedded", out_dir=tmp_path / "out")
    with fabric:
        s1 = fabric.switch("s1")
        h1, h2 = fabric.node("h1"), fabric.node("h2")
        client = SwitchClient("s1", s1.grpc_address, timeout=10).connect()
        storm = None
        try:
            client.set_pipeline(compiled.p4info, compiled.device_config_bytes())
            p4 = client.p4
            for mac, port in ((h1.MAC(), H1_PORT), (h2.MAC(), H2_PORT)):
                client.write([update("INSERT", entity(p4.table_entry(
                    f"{ING}.forwarding.l2", {"hdr.ethernet.dst_addr": mac}, f"{ING}.forwarding.l2_forward",
                    {"port": port})))])
            pfc = PfcManager({"s1": client})
            pfc.configure("s1", SwitchPfc(
                switch_id=1,
                # Pause times counted at 1 Gb/s (33 ms per frame): a storm stays continuous even when the host's
                # frames arrive tens of ms apart on this loaded machine.
                ports=(PortPfc(H2_PORT, link_bps=1e9, detect_ms=100, restore_ms=200, action="drop",
                               deadlock_ms=0),),
                thresholds=(QueueThresholds(H2_PORT, CLS, xoff=4, xon=1),), sender_ports=(H1_PORT,)))
            assert _ping(h1, 3) == 3, "h1 reaches h2 before the storm"

            start = time.monotonic()
            storm = h2.popen([sys.executable, "-c", STORM, h2.defaultIntf().name, "3.0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            ev = None
            while ev is None:
                if time.monotonic() - start > 10:
                    err = storm.stderr.read().decode() if storm.poll() is not None and storm.stderr else "running"
                    counts = [client.read_counter(f"{ING}.{n}", H2_PORT * (8 if "class" in n else 1) + 0)[0]
                              .data.packet_count for n in ("qos.pfc_rx", "pfc.pfc_rx_class", "pfc.pfc_malformed")]
                    raise AssertionError(f"no storm reported; pfc_rx, rx_class, malformed: {counts}; storm: {err}")
                try:
                    for e in decode_digest("s1", client.digests.get(timeout=0.5)):
                        pfc.handle(e)
                        ev = e if e.kind == "storm" else ev
                except queue.Empty:
                    pass
            detected = time.monotonic() - start
            assert (ev.port, ev.classes) == (H2_PORT, (CLS,))
            assert pfc.storms == {("s1", H2_PORT, CLS)}
            # Drop action while the storm lasts: h1's echo requests are dropped, nothing pauses h1.
            assert _ping(h1, 5) == 0
            dropped = client.read_counter(f"{ING}.pfc.pfcwd_dropped", H2_PORT * 8 + CLS)[0].data.packet_count
            assert dropped >= 5
            assert client.read_counter(f"{EGR}.pfc_gen.pfc_xoff_tx", H1_PORT * 8 + CLS)[0].data.packet_count == 0
            storm.wait(timeout=10)
            stopped = time.monotonic()
            time.sleep(0.25)                       # restore_ms without pause frames
            assert _ping(h1, 3) >= 2, "traffic resumes after restoration"
            restored = None
            while restored is None:
                assert time.monotonic() - stopped < 10, "no restoration reported"
                try:
                    for e in decode_digest("s1", client.digests.get(timeout=0.5)):
                        pfc.handle(e)
                        restored = e if e.kind == "restore" else restored
                except queue.Empty:
                    pass
            assert pfc.storms == set()
            rx = client.read_counter(f"{ING}.pfc.pfc_rx_class", H2_PORT * 8 + CLS)[0].data.packet_count
            print(f"\npause storm: {rx} PFC frames; storm reported {detected * 1000:.0f} ms after the first "
                  f"(detection time 100 ms); {dropped} packets dropped by the watchdog; restoration reported "
                  f"after the storm stopped and {0.25 * 1000:.0f} ms of quiet (restoration time 200 ms)")
        finally:
            if storm is not None and storm.poll() is None:
                storm.kill()
                storm.wait()
            client.close()
