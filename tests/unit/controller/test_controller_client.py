"""The P4Runtime client against a loopback P4Runtime server double: mastership, per-update errors, timeouts."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_p4rt_double import DoubleServer
from p4.v1 import p4runtime_pb2

from controller.client import StreamEvent, SwitchClient, entity, update
from controller.exceptions import MastershipError, RpcError, SwitchUnavailableError
from controller.p4info import P4InfoHelper, load_p4info, multicast_group


@pytest.fixture
def server() -> Iterator[DoubleServer]:
    s = DoubleServer()
    yield s
    s.servicer.hang.clear()
    s.stop()


@pytest.fixture
def helper(conformance_dir: Path) -> P4InfoHelper:
    return P4InfoHelper(load_p4info(conformance_dir / "p4info" / "runtime_tables.p4info.txtpb"))


def _route(helper: P4InfoHelper, prefix: str) -> p4runtime_pb2.Update:
    te = helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": prefix}, "I.to_port", {"port": 3})
    return update("INSERT", entity(te))


def _wait_event(events: queue.Queue[StreamEvent], kind: str, timeout: float = 5.0) -> StreamEvent:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            ev = events.get(timeout=0.1)
        except queue.Empty:
            continue
        if ev.kind == kind:
            return ev
    raise AssertionError(f"no {kind} event")


def test_primary_writes_and_reads_back(server: DoubleServer, helper: P4InfoHelper) -> None:
    with SwitchClient("s1", server.address, timeout=10) as c:
        assert c.is_primary
        c.set_pipeline(helper.p4info, b"{}")
        c.write([_route(helper, "10.1.0.0/16")])
        got = [c.p4.decode_table_entry(e) for e in c.read_table("I.ipv4_lpm")]
        assert got == [helper.decode_table_entry(_route(helper, "10.1.0.0/16").entity.table_entry)]
        c.write([update("INSERT", entity(multicast_group(7, [(1, 0), (2, 0)])))])
        groups = c.read_multicast_groups()
        assert [g.multicast_group_id for g in groups] == [7]


def test_per_update_errors_are_decoded(server: DoubleServer, helper: P4InfoHelper) -> None:
    with SwitchClient("s1", server.address, timeout=10) as c:
        c.set_pipeline(helper.p4info, b"{}")
        c.write([_route(helper, "10.1.0.0/16")])
        with pytest.raises(RpcError) as info:
            c.write([_route(helper, "10.2.0.0/16"), _route(helper, "10.1.0.0/16")])
        err = info.value
        assert [(u.index, u.code_name) for u in err.updates] == [(1, "ALREADY_EXISTS")]
        assert "update 1: ALREADY_EXISTS" in str(err)


def test_large_per_update_error_details_reach_the_caller(server: DoubleServer, helper: P4InfoHelper) -> None:
    """simple_switch_grpc refuses register writes with one p4.v1.Error per update; for a few hundred updates the
    `grpc-status-details-bin` trailer passes gRPC's default 16 KB metadata limit. The client must still decode every
    per-update code, not fail with RESOURCE_EXHAUSTED."""
    from google.rpc import code_pb2

    server.servicer.refuse_registers = code_pb2.UNIMPLEMENTED
    with SwitchClient("s1", server.address, timeout=10) as c:
        c.set_pipeline(helper.p4info, b"{}")
        n = 600
        updates = []
        for i in range(n):
            e = p4runtime_pb2.Entity()
            e.register_entry.register_id = 0x05000001
            e.register_entry.index.index = i
            e.register_entry.data.bitstring = b"\x00"
            updates.append(update("MODIFY", e))
        with pytest.raises(RpcError) as info:
            c.write(updates)
        err = info.value
        assert err.code_name == "UNKNOWN", err.detail
        assert [u.index for u in err.updates] == list(range(n))
        assert {u.code_name for u in err.updates} == {"UNIMPLEMENTED"}


def test_second_controller_takes_over_and_first_stops_writing(server: DoubleServer, helper: P4InfoHelper) -> None:
    events: queue.Queue[StreamEvent] = queue.Queue()
    first = SwitchClient("s1", server.address, timeout=10, election_id=(0, 10), on_event=events.put).connect()
    try:
        first.set_pipeline(helper.p4info, b"{}")
        with SwitchClient("s1", server.address, timeout=10, election_id=(0, 20)) as second:
            assert second.is_primary
            _wait_event(events, "mastership_lost")
            assert not first.is_primary
            writes = server.servicer.writes
            with pytest.raises(MastershipError):
                first.write([_route(helper, "10.3.0.0/16")])
            assert server.servicer.writes == writes  # refused locally, nothing sent
            second.write([_route(helper, "10.3.0.0/16")])
        # the newer controller left: the switch names the first primary again (its announcement, or our request)
        deadline = time.monotonic() + 10
        while not first.is_primary and time.monotonic() < deadline:
            time.sleep(0.02)
        assert first.arbitrate()
        first.write([_route(helper, "10.4.0.0/16")])
    finally:
        first.close()


def test_backup_connect_is_refused_when_primary_required(server: DoubleServer) -> None:
    with SwitchClient("s1", server.address, timeout=10, election_id=(0, 50)):
        late = SwitchClient("s1", server.address, timeout=10, election_id=(0, 5))
        try:
            with pytest.raises(MastershipError, match="another controller is primary"):
                late.connect()
            assert late.connect(require_primary=False) is late and not late.is_primary
        finally:
            late.close()


def test_unreachable_switch_times_out() -> None:
    c = SwitchClient("gone", "127.0.0.1:1", timeout=0.3)
    with pytest.raises(SwitchUnavailableError, match="no P4Runtime server"):
        c.connect()


def test_hung_switch_hits_deadline(server: DoubleServer, helper: P4InfoHelper) -> None:
    with SwitchClient("s1", server.address, timeout=10) as c:
        c.set_pipeline(helper.p4info, b"{}")
        c.timeout = 0.5
        server.servicer.hang.set()
        with pytest.raises(SwitchUnavailableError, match="DEADLINE_EXCEEDED"):
            c.write([_route(helper, "10.5.0.0/16")])
        server.servicer.hang.clear()


def test_stream_loss_is_reported_and_reconnect_restores(helper: P4InfoHelper) -> None:
    events: queue.Queue[StreamEvent] = queue.Queue()
    server = DoubleServer()
    c = SwitchClient("s1", server.address, timeout=10, on_event=events.put).connect()
    c.timeout = 1
    try:
        server.stop()
        _wait_event(events, "stream_closed")
        assert not c.is_primary
        with pytest.raises(SwitchUnavailableError):
            c.reconnect(attempts=1, delay=0)
    finally:
        c.close()
