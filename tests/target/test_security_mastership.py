"""Mastership end to end with the controller's client against the embedded server: a second controller with a
lower election id cannot write (neither through the client, which refuses locally, nor with a forged request that
skips that check: the server answers PERMISSION_DENIED); a controller that loses mastership stops writing, says so
(a `mastership_lost` stream event, turned into a controller event, and a MastershipError naming the reason), and
the switch keeps only what the primary wrote."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.client import StreamEvent, SwitchClient, entity, update
from controller.events import from_stream
from controller.exceptions import MastershipError, SwitchUnavailableError
from controller.p4info import P4InfoHelper, load_p4info
from p4switch.server import P4RuntimeServer, StateDevice


@pytest.fixture
def address() -> Iterator[str]:
    server = P4RuntimeServer(StateDevice(), address="127.0.0.1:0").start()
    yield f"127.0.0.1:{server.port}"
    server.stop()


@pytest.fixture
def helper(conformance_dir: Path) -> P4InfoHelper:
    return P4InfoHelper(load_p4info(conformance_dir / "p4info" / "runtime_tables.p4info.txtpb"))


def _route(helper: P4InfoHelper, prefix: str) -> p4runtime_pb2.TableEntry:
    return helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": prefix}, "I.to_port", {"port": 1})


def _wait(pred: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_a_controller_with_a_lower_election_id_cannot_write(address: str, helper: P4InfoHelper) -> None:
    with SwitchClient("s1", address, election_id=(0, 100), timeout=10) as primary:
        primary.set_pipeline(helper.p4info, b"")
        primary.write([update("INSERT", entity(_route(helper, "10.0.0.0/8")))])
        with pytest.raises(MastershipError, match="another controller is primary"):
            SwitchClient("s1", address, election_id=(0, 50), timeout=10).connect()
        low = SwitchClient("s1", address, election_id=(0, 50), timeout=10).connect(require_primary=False)
        try:
            assert not low.is_primary
            with pytest.raises(MastershipError, match="not primary"):
                low.write([update("INSERT", entity(_route(helper, "11.0.0.0/8")))])
            with pytest.raises(MastershipError, match="not primary"):
                low.set_pipeline(helper.p4info, b"")
            assert len(low.read_table("I.ipv4_lpm")) == 1  # a backup may still read
        finally:
            low.close()
        # a forged request with the lower id, skipping the client's own check, is refused by the switch
        with grpc.insecure_channel(address) as channel:
            request = p4runtime_pb2.WriteRequest(device_id=0, election_id=p4runtime_pb2.Uint128(low=50))
            request.updates.append(update("INSERT", entity(_route(helper, "12.0.0.0/8"))))
            with pytest.raises(grpc.RpcError) as info:
                p4runtime_pb2_grpc.P4RuntimeStub(channel).Write(request, timeout=10)
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        tables = primary.read_table("I.ipv4_lpm")
        assert len(tables) == 1 and tables[0] == _route(helper, "10.0.0.0/8")


def test_a_controller_that_loses_mastership_stops_writing_and_says_so(address: str, helper: P4InfoHelper) -> None:
    events: queue.Queue[StreamEvent] = queue.Queue()
    old = SwitchClient("s1", address, election_id=(0, 10), timeout=10, on_event=events.put).connect()
    try:
        old.set_pipeline(helper.p4info, b"")
        with SwitchClient("s1", address, election_id=(0, 20), timeout=10) as new:
            assert _wait(lambda: not old.is_primary)
            got = [events.get(timeout=5) for _ in range(2)]
            assert [e.kind for e in got] == ["primary", "mastership_lost"]
            assert "higher election id" in got[1].detail
            with pytest.raises(MastershipError, match="not primary; refusing to write"):
                old.write([update("INSERT", entity(_route(helper, "10.0.0.0/8")))])
            # even with a stale belief that it is primary, the switch refuses and the client corrects itself
            old.is_primary = True
            with pytest.raises(MastershipError, match="refused: not primary"):
                old.write([update("INSERT", entity(_route(helper, "10.0.0.0/8")))])
            assert old.is_primary is False
            assert new.read_table("I.ipv4_lpm") == []
    finally:
        old.close()


def test_lost_mastership_becomes_a_controller_event() -> None:
    event = from_stream(StreamEvent("s1", "mastership_lost", "a controller with a higher election id took over"),
                        None)
    assert event is not None and event.kind == "mastership_lost" and event.switch == "s1"
    assert "higher election id" in event.detail


def test_a_refused_connect_leaves_nothing_behind_and_says_why(address: str) -> None:
    """A duplicate election id ends the new stream: the client reports the switch's reason (not a timeout), and
    closes its channel, so the same id can connect once the first controller is gone."""
    first = SwitchClient("s1", address, election_id=(0, 7), timeout=10).connect()
    try:
        with pytest.raises(SwitchUnavailableError, match="ended the stream: INVALID_ARGUMENT"):
            SwitchClient("s1", address, election_id=(0, 7), timeout=10).connect()
    finally:
        first.close()
    with SwitchClient("s1", address, election_id=(0, 7), timeout=10) as again:
        assert again.is_primary
