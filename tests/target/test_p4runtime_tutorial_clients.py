"""The embedded switch and its P4Runtime server as p4lang/tutorials' clients see simple_switch_grpc.

Their p4runtime_lib arbitrates with election id 1, wraps the device config in PI's `p4.tmp.P4DeviceConfig`,
half-closes its stream in `shutdown()` without waiting, and the next connection (the next PTF test) arbitrates with
election id 1 again at once. PI's PTF base class arbitrates with no election id and waits for the server to end
the stream at teardown. Real simple_switch_grpc passes both suites; these tests hold the embedded switch to the
same behaviour, and check the forwarding the clients programmed with packets built by Scapy.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

TUTORIAL = Path(__file__).resolve().parents[1] / "integration" / "tutorial"
sys.path.insert(0, str(TUTORIAL))

from tutorial_client import PtfStyleConnection, TutorialConnection  # noqa: E402

from p4switch.compiler import compile_file  # noqa: E402
from p4switch.server import P4RuntimeServer  # noqa: E402
from p4switch.switch.core import Switch  # noqa: E402

HOST_MAC = "08:00:00:00:02:22"
SWITCH_MAC = "08:00:00:00:01:00"


@dataclass
class Rig:
    switch: Switch
    server: P4RuntimeServer
    address: str
    p4info: p4info_pb2.P4Info
    device_config: bytes
    out: list[tuple[int, bytes]]

    def ids(self) -> tuple[int, int, dict[str, int]]:
        table = next(t for t in self.p4info.tables if t.preamble.name == "FwdIngress.routes")
        action = next(a for a in self.p4info.actions if a.preamble.name == "FwdIngress.to_next_hop")
        return table.preamble.id, action.preamble.id, {p.name: p.id for p in action.params}

    def route(self, dst: str, prefix: int, mac: str, port: int) -> p4runtime_pb2.TableEntry:
        table_id, action_id, params = self.ids()
        entry = p4runtime_pb2.TableEntry(table_id=table_id)
        match = entry.match.add(field_id=1)
        match.lpm.value = bytes(int(x) for x in dst.split("."))
        match.lpm.prefix_len = prefix
        entry.action.action.action_id = action_id
        entry.action.action.params.add(param_id=params["next_mac"], value=bytes.fromhex(mac.replace(":", "")))
        entry.action.action.params.add(param_id=params["out_port"], value=port.to_bytes(2, "big"))
        return entry

    def send(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        self.out.clear()
        self.switch.process(port, frame)
        self.switch.wait_idle(5)
        return list(self.out)


def frame_to(dst: str, ttl: int = 64) -> bytes:
    return bytes(Ether(dst=SWITCH_MAC, src="08:00:00:00:01:11") / IP(src="10.0.1.1", dst=dst, ttl=ttl)
                 / UDP(sport=1234, dport=4321) / b"tutorial")


def forwarded(dst: str, ttl: int = 63) -> bytes:
    """What the program must emit: MACs rewritten, TTL one less, checksum recomputed (by Scapy, independently)."""
    return bytes(Ether(dst=HOST_MAC, src=SWITCH_MAC) / IP(src="10.0.1.1", dst=dst, ttl=ttl)
                 / UDP(sport=1234, dport=4321) / b"tutorial")


def start_rig(device_id: int) -> Rig:
    compiled = compile_file(TUTORIAL / "ipv4_fwd.p4")
    sw = Switch(device_id=device_id)
    out: list[tuple[int, bytes]] = []
    sw.add_output_callback(lambda port, frame: out.append((port, bytes(frame))))
    server = P4RuntimeServer(sw, address="127.0.0.1:0", device_id=device_id).start()
    sw.start()
    return Rig(sw, server, f"127.0.0.1:{server.port}", compiled.p4info, compiled.device_config_bytes(), out)


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = start_rig(device_id=0)
    try:
        yield r
    finally:
        r.server.stop()
        r.switch.stop()


def test_back_to_back_connections_with_election_id_1(rig: Rig) -> None:
    """Eight PTF tests in a row, each a new p4runtime_lib connection that becomes primary, pushes the pipeline,
    writes a route and half-closes without waiting."""
    for i in range(8):
        conn = TutorialConnection(rig.address)
        arbitration = conn.master_arbitration_update()
        assert arbitration.status.code == code_pb2.OK, f"connection {i}: {arbitration}"
        assert (arbitration.election_id.high, arbitration.election_id.low) == (0, 1)
        assert arbitration.device_id == 0
        conn.set_forwarding_pipeline_config(rig.p4info, rig.device_config)
        conn.write_table_entry(rig.route(f"10.0.{i}.0", 24, HOST_MAC, 2))
        assert len(conn.read_table_entries()) == 1  # VERIFY_AND_COMMIT started from an empty pipeline
        assert rig.send(1, frame_to(f"10.0.{i}.7")) == [(2, forwarded(f"10.0.{i}.7"))]
        conn.shutdown()


def test_raw_json_device_config_as_newer_tutorials_send_it(rig: Rig) -> None:
    conn = TutorialConnection(rig.address)
    assert conn.master_arbitration_update().status.code == code_pb2.OK
    conn.set_forwarding_pipeline_config(rig.p4info, rig.device_config, wrap=False)
    conn.write_table_entry(rig.route("10.0.2.0", 24, HOST_MAC, 3))
    assert rig.send(1, frame_to("10.0.2.2", ttl=2)) == [(3, forwarded("10.0.2.2", ttl=1))]
    assert rig.send(1, frame_to("10.9.9.9")) == []  # a miss drops
    conn.shutdown()


def test_the_stream_ends_after_a_half_close_and_the_election_id_is_free(rig: Rig) -> None:
    first = TutorialConnection(rig.address)
    assert first.master_arbitration_update().status.code == code_pb2.OK
    first.shutdown()
    assert first.stream_ended.wait(5), "the server did not end the stream after the client's half-close"
    assert first.stream_error is None  # ended with OK, as PI does
    second = TutorialConnection(rig.address)
    assert second.master_arbitration_update().status.code == code_pb2.OK
    second.shutdown()


def test_a_client_that_goes_away_without_half_close_frees_its_election_id(rig: Rig) -> None:
    gone = TutorialConnection(rig.address)
    assert gone.master_arbitration_update().status.code == code_pb2.OK
    gone.close_channel()
    deadline = time.monotonic() + 10
    while rig.server.stats()["streams"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rig.server.stats()["streams"] == 0
    successor = TutorialConnection(rig.address)
    assert successor.master_arbitration_update().status.code == code_pb2.OK
    successor.set_forwarding_pipeline_config(rig.p4info, rig.device_config)
    successor.shutdown()


def test_an_election_id_whose_holder_half_closes_just_after_is_granted(rig: Rig) -> None:
    """The race p4runtime_lib creates: the new stream's arbitration reaches the server while the old stream's
    half-close is still on its way. Once the holder is gone (here 0.3 s later) the newcomer is primary."""
    holder = TutorialConnection(rig.address)
    assert holder.master_arbitration_update().status.code == code_pb2.OK
    newcomer = TutorialConnection(rig.address)
    request = p4runtime_pb2.StreamMessageRequest()
    request.arbitration.device_id = 0
    request.arbitration.election_id.low = 1
    newcomer._requests.put(request)
    time.sleep(0.3)
    holder.shutdown()
    arbitration = newcomer.arbitrations.get(timeout=5)
    assert arbitration.status.code == code_pb2.OK
    newcomer.set_forwarding_pipeline_config(rig.p4info, rig.device_config)
    newcomer.shutdown()


def test_a_live_duplicate_is_still_refused(rig: Rig) -> None:
    holder = TutorialConnection(rig.address)
    assert holder.master_arbitration_update().status.code == code_pb2.OK
    twin = TutorialConnection(rig.address)
    request = p4runtime_pb2.StreamMessageRequest()
    request.arbitration.device_id = 0
    request.arbitration.election_id.low = 1
    twin._requests.put(request)
    assert twin.stream_ended.wait(10)
    assert twin.stream_error is not None and twin.stream_error.code() == grpc.StatusCode.INVALID_ARGUMENT
    holder.set_forwarding_pipeline_config(rig.p4info, rig.device_config)  # still the primary
    holder.shutdown()


def test_ptf_base_test_style_no_election_id_and_teardown_waits(rig: Rig) -> None:
    for i in range(4):
        test = PtfStyleConnection(rig.address)
        reply = test.handshake()
        assert reply is not None and reply.arbitration.status.code == code_pb2.OK, f"test {i}: {reply}"
        pipeline = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        pipeline.config.p4info.CopyFrom(rig.p4info)
        pipeline.config.p4_device_config = rig.device_config
        test.stub.SetForwardingPipelineConfig(pipeline, timeout=60)
        write = p4runtime_pb2.WriteRequest()
        update = write.updates.add(type=p4runtime_pb2.Update.INSERT)
        update.entity.table_entry.CopyFrom(rig.route("10.0.3.3", 32, HOST_MAC, 4))
        test.write(write)
        assert rig.send(2, frame_to("10.0.3.3")) == [(4, forwarded("10.0.3.3"))]
        assert test.tear_down(timeout=5), f"test {i}: the server kept the stream open after the half-close"


def test_device_id_and_get_forwarding_pipeline_config() -> None:
    """The tutorials start switch N with `--device-id N` and talk to it with that id."""
    rig = start_rig(device_id=3)
    try:
        conn = TutorialConnection(rig.address, device_id=3)
        arbitration = conn.master_arbitration_update()
        assert arbitration.status.code == code_pb2.OK and arbitration.device_id == 3
        conn.set_forwarding_pipeline_config(rig.p4info, rig.device_config)
        stub = p4runtime_pb2_grpc.P4RuntimeStub(conn.channel)
        got = stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=3),
                                               timeout=30)
        assert got.config.p4info == rig.p4info
        assert got.config.p4_device_config
        with pytest.raises(grpc.RpcError) as wrong:
            stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=30)
        assert wrong.value.code() == grpc.StatusCode.NOT_FOUND
        conn.shutdown()
    finally:
        rig.server.stop()
        rig.switch.stop()
