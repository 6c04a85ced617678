"""The real switch behind the P4Runtime server: pipeline pushed over gRPC, packet-out through the pipeline to a
packet-in, a multicast group written over P4Runtime replicating data-plane traffic, and a busy gRPC port refused
with one line by `p4ina switch`."""

from __future__ import annotations

import queue
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from switch_cli_runner import run_switch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "switch"))

from switch_ctlprog import ctl, device_config, observe, p4info

import p4switch.server as server_mod
from p4switch.switch.core import Switch

ELECTION = p4runtime_pb2.Uint128(high=0, low=1)
P4INFO = p4info()  # the program's own P4Info: the switch checks it against the program it compiles
CPU = 64


class Client:
    def __init__(self, port: int) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        self.responses = self.stub.StreamChannel(iter(self.requests.get, None))
        self.requests.put(p4runtime_pb2.StreamMessageRequest(
            arbitration=p4runtime_pb2.MasterArbitrationUpdate(device_id=0, election_id=ELECTION)))
        first = next(self.responses)
        assert first.WhichOneof("update") == "arbitration" and first.arbitration.status.code == 0

    def push_pipeline(self) -> None:
        self.stub.SetForwardingPipelineConfig(p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, election_id=ELECTION,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
            config=p4runtime_pb2.ForwardingPipelineConfig(p4info=P4INFO, p4_device_config=device_config()),
        ))

    def close(self) -> None:
        self.requests.put(None)
        self.channel.close()


@pytest.fixture
def running() -> Iterator[tuple[Switch, Client]]:
    sw = Switch(cpu_port=CPU)
    server = server_mod.P4RuntimeServer(sw, address="127.0.0.1:0").start()
    sw.start()
    client = Client(server.port)
    try:
        yield sw, client
    finally:
        client.close()
        server.stop()
        sw.stop()


def test_pipeline_push_packet_out_to_packet_in(running: tuple[Switch, Client]) -> None:
    sw, client = running
    client.push_pipeline()
    assert sw.pipeline is not None
    client.requests.put(p4runtime_pb2.StreamMessageRequest(packet=p4runtime_pb2.PacketOut(payload=ctl(port=CPU))))
    msg = next(client.responses)
    assert msg.WhichOneof("update") == "packet"
    obs = observe(msg.packet.payload)
    assert obs["ingress_port"] == CPU and obs["egress_port"] == CPU


def test_multicast_group_written_over_p4runtime_replicates(running: tuple[Switch, Client]) -> None:
    sw, client = running
    client.push_pipeline()
    group = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=3, replicas=[
        p4runtime_pb2.Replica(egress_port=1, instance=1), p4runtime_pb2.Replica(egress_port=2, instance=2)])
    client.stub.Write(p4runtime_pb2.WriteRequest(device_id=0, election_id=ELECTION, updates=[p4runtime_pb2.Update(
        type=p4runtime_pb2.Update.INSERT, entity=p4runtime_pb2.Entity(
            packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(multicast_group_entry=group)))]))
    out: list[tuple[int, bytes]] = []
    sw.add_output_callback(lambda port, frame: out.append((port, frame)))
    sw.inject(0, ctl(mcast=3))
    assert sw.wait_idle()
    assert sorted((p, observe(f)["egress_rid"]) for p, f in out) == [(1, 1), (2, 2)]


def test_busy_grpc_port_is_a_one_line_error(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run_switch(["--no-p4", "--grpc-server-addr", f"127.0.0.1:{port}"], tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("p4ina switch: error:") and str(port) in result.stderr


def test_admin_service_reaches_the_traffic_manager_and_impairments(running: tuple[Switch, Client]) -> None:
    from p4switch.server.admin import call

    sw, client = running
    call(client.channel, "set_queue_rate", {"port": 3, "rate_pps": 250})
    call(client.channel, "set_queue_depth", {"port": 3, "depth": 7})
    call(client.channel, "set_impairment", {"port": 2, "direction": "out", "loss": 1.0, "seed": 4})
    (queue3,) = [q for q in sw.stats()["queues"] if q["port"] == 3]
    assert queue3["rate_pps"] == 250 and queue3["capacity"] == 7
    client.push_pipeline()
    sw.inject(0, ctl(port=2))
    assert sw.wait_idle()
    assert sw.impairment_stats()["2/out"]["lost"] == 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bmv2_style_target_options_after_double_dash(tmp_path: Path) -> None:
    import signal
    import subprocess

    from switch_cli_runner import switch_command

    port = free_port()
    proc = subprocess.Popen(
        switch_command(["--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{port}", "--cpu-port", "255"]),
        cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert f"P4Runtime on 127.0.0.1:{port}" in line, line
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            reply = p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(p4runtime_pb2.CapabilitiesRequest())
            assert reply.p4runtime_api_version
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_unknown_target_option_is_a_one_line_error(tmp_path: Path) -> None:
    result = run_switch(["--no-p4", "--", "--thrift-port", "9090"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "p4ina switch: error: unknown target option(s): --thrift-port 9090"
