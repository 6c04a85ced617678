"""The threaded `Switch`: in-process ports, CPU port, pipeline swap, admin operations, clean stop."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from switch_ctlprog import ctl, device_config, observe, p4info
from switch_helpers import PRE

from p4switch.exceptions import DeviceConfigError, P4SwitchError
from p4switch.switch.core import Switch
from p4switch.switch.entries_file import apply_write_request
from p4switch.switch.impairments import ImpairmentConfig, ImpairmentError
from p4switch.switch.pfc import build_pfc, parse_pfc


class Outputs:
    def __init__(self) -> None:
        self.frames: list[tuple[int, bytes]] = []
        self.lock = threading.Lock()

    def __call__(self, port: int, frame: bytes) -> None:
        with self.lock:
            self.frames.append((port, frame))

    def on(self, port: int) -> list[bytes]:
        with self.lock:
            return [f for p, f in self.frames if p == port]


@pytest.fixture
def switch() -> Iterator[Switch]:
    sw = Switch(cpu_port=64, priority_queues=2)
    sw.install_pipeline(p4info(), device_config())
    apply_write_request(sw.state, text_format.Parse(PRE, p4runtime_pb2.WriteRequest()))
    sw.start()
    yield sw
    sw.stop()


def wait_until(cond: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_inject_and_output_callback(switch: Switch) -> None:
    out = Outputs()
    switch.add_output_callback(out)
    for i in range(50):
        switch.inject(0, ctl(port=2, payload=bytes([i])))
    assert switch.wait_idle()
    assert [f[-1] for f in out.on(2)] == list(range(50))
    assert switch.stats()["transmitted"] == 50


def test_cpu_port_packet_in_and_packet_out(switch: Switch) -> None:
    got: list[bytes] = []
    out = Outputs()
    switch.add_output_callback(out)
    switch.packet_in_sink = got.append
    switch.inject(0, ctl(port=64))  # egress on the CPU port -> packet-in
    switch.inject_packet_out(ctl(port=3))  # enters ingress on the CPU port
    assert switch.wait_idle()
    assert len(got) == 1 and observe(got[0])["egress_port"] == 64
    assert len(out.on(3)) == 1 and observe(out.on(3)[0])["ingress_port"] == 64


def test_bad_pipeline_is_refused_and_the_old_one_keeps_running(switch: Switch) -> None:
    old = switch.pipeline
    for bad, message in [
        (b"not json", "neither JSON nor a p4.tmp.P4DeviceConfig"),
        (json.dumps({"format": "bmv2"}).encode(), "format"),
        (json.dumps({"format": "p4ina-v1model/1", "python": "raise ValueError('boom')"}).encode(), "old format"),
        (device_config().replace(b"apply", b"apply!", 1), "program_sha256"),
    ]:
        with pytest.raises(DeviceConfigError, match=message):
            switch.install_pipeline(p4info_pb2.P4Info(), bad)
        assert switch.pipeline is old
    out = Outputs()
    switch.add_output_callback(out)
    switch.inject(0, ctl(port=1))
    assert switch.wait_idle() and len(out.on(1)) == 1


def test_pipeline_swap_resets_state(switch: Switch) -> None:
    assert switch.state.pre.mcast_groups
    switch.install_pipeline(p4info(), device_config())
    assert not switch.state.pre.mcast_groups
    out = Outputs()
    switch.add_output_callback(out)
    switch.inject(0, ctl(mcast=1))
    assert switch.wait_idle() and out.frames == []


def test_no_pipeline_drops_everything() -> None:
    with Switch() as sw:
        assert sw.state is None
        sw.inject(0, ctl(port=1))
        assert sw.wait_idle()
        assert sw.dropped_no_pipeline == 1


def test_queue_metadata_reflects_a_backlog(switch: Switch) -> None:
    out = Outputs()
    switch.add_output_callback(out)
    switch.tm.pause(1, 0, 30.0)  # hold the queue so a backlog builds, independent of machine speed
    for _ in range(5):
        switch.inject(0, ctl(port=1))
    assert wait_until(lambda: switch.tm.depth(1, 0) == 5)
    switch.tm.pause(1, 0, 0)
    assert switch.wait_idle()
    obs = [observe(f) for f in out.on(1)]
    assert [o["enq_qdepth"] for o in obs] == [0, 1, 2, 3, 4]
    assert [o["deq_qdepth"] for o in obs] == [4, 3, 2, 1, 0]
    assert all(o["deq_timedelta"] > 0 for o in obs)  # they all waited in the paused queue


def test_queue_depth_admin_tail_drops(switch: Switch) -> None:
    switch.set_queue_depth(1, 2)
    switch.tm.pause(1, 0, 30.0)
    for _ in range(5):
        switch.inject(0, ctl(port=1))
    assert wait_until(lambda: switch.stats()["dropped_queue_full"] == 3)
    switch.tm.pause(1, 0, 0)
    assert switch.wait_idle()


def test_received_pfc_frame_pauses_the_egress_queue(switch: Switch) -> None:
    frame = build_pfc(b"\x02\x00\x00\x00\x00\x01", {1: 0xFFFF})
    assert parse_pfc(frame) == {1: 0xFFFF}
    switch.link_bps = 1e3  # 65535 quanta * 512 bits at 1 kb/s: half a minute
    switch.inject(1, frame)
    assert switch.pfc_frames_received == 1
    switch.inject(0, ctl(port=1, priority=1))
    assert wait_until(lambda: switch.tm.depth(1, 1) == 1)
    switch.inject(1, build_pfc(b"\x02\x00\x00\x00\x00\x01", {1: 0}))  # resume
    assert switch.wait_idle()


def test_impairment_loss_on_output(switch: Switch) -> None:
    out = Outputs()
    switch.add_output_callback(out)
    switch.set_impairment(2, "out", loss=1.0, seed=1)
    switch.inject(0, ctl(port=2))
    switch.inject(0, ctl(port=1))
    assert switch.wait_idle()
    assert out.on(2) == [] and len(out.on(1)) == 1
    assert switch.impairment_stats()["2/out"]["lost"] == 1
    switch.set_impairment(2, "out")  # all zero: removed
    switch.inject(0, ctl(port=2))
    assert switch.wait_idle() and len(out.on(2)) == 1


def test_impairment_delay_and_reorder_complete(switch: Switch) -> None:
    out = Outputs()
    switch.add_output_callback(out)
    # a long hold: the first frame waits for the second however slow this machine is
    switch.links.configure(2, "in", ImpairmentConfig(reorder=1.0, delay_ms=5, reorder_hold_ms=600_000, seed=2))
    switch.inject(2, ctl(port=1, payload=b"A"))
    switch.inject(2, ctl(port=1, payload=b"B"))
    assert switch.wait_idle()
    assert [f[-1:] for f in out.on(1)] == [b"B", b"A"]


def test_bad_arguments() -> None:
    with pytest.raises(P4SwitchError):
        Switch(cpu_port=600)
    with Switch() as sw:
        with pytest.raises(ImpairmentError):
            sw.set_impairment(1, "sideways", loss=0.1)
        with pytest.raises(P4SwitchError, match="no such interface"):
            sw.add_interface(1, "p4ina-nonexistent0")


def test_stop_is_idempotent() -> None:
    sw = Switch()
    sw.start()
    sw.stop()
    sw.stop()
    sw.inject(0, b"x" * 20)  # after stop: refused quietly, never blocks


def test_replacing_an_impairment_releases_its_held_frame(switch: Switch) -> None:
    out = Outputs()
    switch.add_output_callback(out)
    switch.links.configure(1, "out", ImpairmentConfig(reorder=1.0, reorder_hold_ms=600_000))
    switch.inject(0, ctl(port=1, payload=b"H"))
    assert wait_until(lambda: switch.links.table[(1, "out")].holding)
    switch.set_impairment(1, "out")  # removed: the held frame leaves now
    assert switch.wait_idle(timeout=5)
    assert [f[-1:] for f in out.on(1)] == [b"H"]


def test_control_plane_writes_while_packets_flow(switch: Switch) -> None:
    """A writer thread rewrites a multicast group (as gRPC threads do) while traffic uses it: no packet fails,
    and every copy matches one of the two group versions."""
    from p4switch.runtime.entries import MODIFY, EntityCodec

    codec = EntityCodec(switch.state)
    versions = [
        p4runtime_pb2.MulticastGroupEntry(multicast_group_id=1, replicas=[
            p4runtime_pb2.Replica(egress_port=1, instance=7), p4runtime_pb2.Replica(egress_port=2, instance=8)]),
        p4runtime_pb2.MulticastGroupEntry(multicast_group_id=1, replicas=[
            p4runtime_pb2.Replica(egress_port=3, instance=5)]),
    ]
    out = Outputs()
    switch.add_output_callback(out)
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            entity = p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
                multicast_group_entry=versions[i % 2]))
            codec.write(MODIFY, entity)
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(300):
            switch.inject(0, ctl(mcast=1))
        assert switch.wait_idle(timeout=60)
    finally:
        stop.set()
        t.join()
    assert switch.stats()["errors"] == 0
    seen = {(p, observe(f)["egress_rid"]) for p, f in out.frames}
    assert seen <= {(1, 7), (2, 8), (3, 5)} and len(out.frames) >= 300


def test_process_runs_a_frame_to_completion_in_the_caller(switch: Switch) -> None:
    out = Outputs()
    switch.add_output_callback(out)
    for i in range(20):
        assert switch.process(0, ctl(port=2, payload=bytes([i])))
        assert [f[-1] for f in out.on(2)] == list(range(i + 1))  # already out when process() returns
