"""p4runtime-shell (package `p4runtime_sh`, unchanged) against the embedded P4Runtime server: push a pipeline,
insert and read table entries, create a multicast group, read counters, send a packet-out, receive a packet-in.

`test_shell_drives_the_control_plane` serves the control-plane-only `StateDevice` (packet I/O checked at the
device boundary); `test_shell_packet_out_comes_back_as_packet_in` runs the real switch engine on a compiled
program, where a packet-out to the CPU port comes back as a packet-in."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import p4runtime_sh.shell as sh
import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.server import P4RuntimeServer, StateDevice

# The P4Info of PACKET_IO_P4 below, written as p4c would (ids: type prefix + name hash bits).
P4INFO = """
pkg_info { arch: "v1model" }
tables {
  preamble { id: 33572104 name: "I.fwd" alias: "fwd" }
  match_fields { id: 1 name: "sm.ingress_port" bitwidth: 9 match_type: EXACT }
  action_refs { id: 16799317 }
  action_refs { id: 16800567 }
  initial_default_action { action_id: 16800567 }
  size: 64
}
actions { preamble { id: 16800567 name: "NoAction" alias: "NoAction" } }
actions {
  preamble { id: 16799317 name: "I.to_port" alias: "to_port" }
  params { id: 1 name: "port" bitwidth: 9 }
}
counters {
  preamble { id: 302003196 name: "I.rx" alias: "rx" }
  spec { unit: BOTH }
  size: 8
}
controller_packet_metadata {
  preamble { id: 67146229 name: "packet_in" alias: "packet_in" annotations: "@controller_header(\\"packet_in\\")" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
controller_packet_metadata {
  preamble { id: 67121543 name: "packet_out" alias: "packet_out" annotations: "@controller_header(\\"packet_out\\")" }
  metadata { id: 1 name: "egress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
"""

PACKET_IO_P4 = r"""
#include <core.p4>
#include <v1model.p4>
#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { packet_in_t packet_in; packet_out_t packet_out; ethernet_t eth; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) { CPU_PORT: from_cpu; default: eth; }
    }
    state from_cpu { pkt.extract(h.packet_out); transition eth; }
    state eth { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) rx;
    action to_port(bit<9> port) { sm.egress_spec = port; }
    table fwd { key = { sm.ingress_port : exact; } actions = { to_port; NoAction; } default_action = NoAction(); size = 64; }
    apply {
        if (h.packet_out.isValid()) {
            sm.egress_spec = h.packet_out.egress_port;
            h.packet_out.setInvalid();
        } else {
            rx.count((bit<32>) sm.ingress_port);
            fwd.apply();
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == CPU_PORT) {
            h.packet_in.setValid();
            h.packet_in.ingress_port = sm.ingress_port;
        }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.packet_in); pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

Connect = Callable[[P4RuntimeServer, Path, Path], None]

FRAME = bytes.fromhex("ffffffffffff" "020000000001" "88b5") + b"p4ina shell test"


def first_packet_ins(packet_in: Any, timeout: float = 5.0) -> list[p4runtime_pb2.StreamMessageResponse]:
    """Packet-ins as soon as there are some (`sniff(timeout=T)` itself always waits the whole T)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = list(packet_in.sniff(timeout=0.2))
        if got:
            return got
    return []


@pytest.fixture()
def shell_on() -> Iterator[Connect]:
    """Calls `sh.setup` against a server and always tears the (process-global) shell client down."""
    servers: list[P4RuntimeServer] = []

    def connect(server: P4RuntimeServer, p4info_path: Path, config_path: Path) -> None:
        servers.append(server)
        sh.setup(device_id=0, grpc_addr=f"127.0.0.1:{server.port}", election_id=(0, 1),
                 config=sh.FwdPipeConfig(str(p4info_path), str(config_path)), verbose=False)

    yield connect
    if getattr(sh, "client", None) is not None:
        sh.teardown()
    for server in servers:
        server.stop()


def test_shell_drives_the_control_plane(tmp_path: Path, shell_on: Connect) -> None:
    device = StateDevice(cpu_port=255)
    server = P4RuntimeServer(device, address="127.0.0.1:0").start()
    (tmp_path / "p.p4info.txtpb").write_text(P4INFO)
    (tmp_path / "p.json").write_bytes(b"")
    shell_on(server, tmp_path / "p.p4info.txtpb", tmp_path / "p.json")

    te = sh.TableEntry("I.fwd")(action="I.to_port")
    te.match["sm.ingress_port"] = "1"
    te.action["port"] = "2"
    te.insert()
    read = list(sh.TableEntry("I.fwd").read())
    assert len(read) == 1 and read[0].action["port"].value == b"\x02"  # canonical bytes, as BMv2 returns
    assert device.state is not None
    assert device.state.tables["I.fwd"].lookup((1,))[:3] == (True, 16799317, (2,))

    group = sh.MulticastGroupEntry(1)
    group.add(1, 1).add(2, 1)
    group.insert()
    groups = list(sh.MulticastGroupEntry(1).read())
    assert [(r.egress_port, r.instance) for r in groups[0].replicas] == [(1, 1), (2, 1)]
    assert [(r.port, r.rid) for r in device.state.pre.replicas(1)] == [(1, 1), (2, 1)]

    counter = device.state.counters["I.rx"]
    counter.count(3, 100)  # what the data plane does on a packet from port 3
    counter.count(3, 60)
    data = {c.index: (c.packet_count, c.byte_count) for c in sh.CounterEntry("I.rx").read()}
    assert data[3] == (2, 160) and data[0] == (0, 0) and len(data) == 8

    sh.PacketOut(payload=FRAME, egress_port="3").send()
    deadline = time.monotonic() + 5
    while not device.packets_out and time.monotonic() < deadline:
        time.sleep(0.01)
    assert device.packets_out == [bytes([3 >> 1, (3 & 1) << 7]) + FRAME]

    packet_in = sh.PacketIn()
    device.emit_packet_in(bytes([7 >> 1, (7 & 1) << 7]) + FRAME)
    received = first_packet_ins(packet_in)
    assert len(received) == 1
    assert received[0].packet.payload == FRAME
    assert {m.metadata_id: m.value for m in received[0].packet.metadata} == {1: b"\x07", 2: b"\x00"}


def _compile(tmp_path: Path) -> tuple[Path, Path]:
    from p4switch import compiler
    return compiler.write_outputs(compiler.compile_text(PACKET_IO_P4, "packet_io"), tmp_path)


def test_shell_packet_out_comes_back_as_packet_in(tmp_path: Path, shell_on: Connect) -> None:
    p4info_path, config_path = _compile(tmp_path)
    from p4switch.switch.core import Switch

    compiled = text_format.Parse(p4info_path.read_text(), p4info_pb2.P4Info())
    assert {c.preamble.name for c in compiled.controller_packet_metadata} == {"packet_in", "packet_out"}
    switch = Switch(cpu_port=255)
    switch.start()
    try:
        server = P4RuntimeServer(switch, address="127.0.0.1:0").start()
        shell_on(server, p4info_path, config_path)
        packet_in = sh.PacketIn()
        sh.PacketOut(payload=FRAME, egress_port="255").send()
        received = first_packet_ins(packet_in)
        assert len(received) == 1
        assert received[0].packet.payload == FRAME
        md = {m.metadata_id: m.value for m in received[0].packet.metadata}
        assert md[1] == b"\xff"  # ingress_port: the CPU port the packet-out entered on
    finally:
        switch.stop()
