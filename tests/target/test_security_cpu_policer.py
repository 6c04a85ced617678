"""Control-plane protection end to end: a host floods frames that the P4 program punts to the CPU port; the server's
packet-in policer passes no more than its burst plus its rate, counts every drop (read through the admin service),
and the controller (the project's P4Runtime client) keeps writing and reading within its timeout meanwhile. A flood
of digests is capped the same way."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from security_support import DIGEST_ALL_P4, PUNT_ALL_P4

from controller.client import StreamEvent, SwitchClient, entity, update
from controller.p4info import P4InfoHelper
from p4switch import compiler
from p4switch.server import P4RuntimeServer, admin
from p4switch.server.policer import PolicerConfig
from p4switch.switch import core

CPU_PORT = 255
RATE, BURST = 200.0, 20
FLOOD_S = 2.0


FRAME = bytes.fromhex("ffffffffffff" "020000000001" "88b5") + bytes(46)


def _wait_for(pred: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred() and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.fixture
def punting_switch() -> Iterator[tuple[Any, P4RuntimeServer, P4InfoHelper]]:
    program = compiler.compile_text(PUNT_ALL_P4, "punt_all")
    switch = core.Switch(cpu_port=CPU_PORT)
    switch.install_pipeline(program.p4info, program.device_config_bytes())
    switch.start()
    server = P4RuntimeServer(switch, address="127.0.0.1:0",
                             packet_in_policer=PolicerConfig(RATE, BURST)).start()
    try:
        yield switch, server, P4InfoHelper(program.p4info)
    finally:
        server.stop()
        switch.stop()


def test_a_packet_in_flood_is_capped_and_the_controller_stays_responsive(
        punting_switch: tuple[Any, P4RuntimeServer, P4InfoHelper]) -> None:
    switch, server, helper = punting_switch
    received: list[int] = []
    lock = threading.Lock()

    def on_event(event: StreamEvent) -> None:
        if event.kind == "packet_in":
            with lock:
                received.append(1)

    address = f"127.0.0.1:{server.port}"
    flooded = 0
    stop = threading.Event()

    def flood() -> None:
        nonlocal flooded
        while not stop.is_set():
            switch.process(1, FRAME)
            flooded += 1

    with SwitchClient("s1", address, election_id=(0, 1), timeout=5, on_event=on_event) as ctl:
        start = time.monotonic()
        flooder = threading.Thread(target=flood, name="flood", daemon=True)
        flooder.start()
        rpcs = 0
        try:
            while time.monotonic() - start < FLOOD_S:
                route = helper.table_entry("I.fwd", {"h.eth.dst": "02:00:00:00:00:09"}, "I.to_port", {"port": 1})
                kind = "INSERT" if rpcs % 2 == 0 else "DELETE"
                ctl.write([update(kind, entity(route))])  # each call raises if no answer within 5 s
                assert len(ctl.read_table("I.fwd")) == (1 if kind == "INSERT" else 0)
                rpcs += 1
        finally:
            stop.set()
            flooder.join(timeout=30)
        elapsed = time.monotonic() - start
        with grpc.insecure_channel(address) as channel:
            policers = admin.call(channel, "policers")
        passed = policers["packet_in"]["passed"]
        _wait_for(lambda: len(received) >= passed)  # queued packet-ins still on their way to the client
        time.sleep(0.1)
        with lock:
            got = len(received)
    dropped = policers["packet_in"]["dropped"]
    print(f"flood: {flooded} frames in {elapsed:.2f} s, {passed} packet-ins passed, {dropped} policed, "
          f"{rpcs} controller write+read pairs answered")
    assert rpcs >= 3, "the controller's writes and reads kept being answered during the flood"
    assert flooded > 4 * (BURST + RATE * elapsed), f"the flood ({flooded} frames) must exceed the cap to test it"
    assert passed <= BURST + RATE * elapsed + 1
    assert got == passed  # everything that passed the policer reached the controller
    # every flooded frame (broadcast: the controller's entry never matches it) was passed or counted as dropped
    assert passed + dropped == flooded
    assert policers["packet_in"]["rate"] == RATE and policers["packet_in"]["burst"] == BURST


def test_the_policer_is_set_and_read_through_the_admin_service(
        punting_switch: tuple[Any, P4RuntimeServer, P4InfoHelper]) -> None:
    _, server, _ = punting_switch
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        got = admin.call(channel, "set_policer", {"policer": "digest", "rate": 50, "burst": 5})
        assert (got["rate"], got["burst"]) == (50, 5)
        assert admin.call(channel, "stats")["server"]["policers"]["digest"]["rate"] == 50
        off = admin.call(channel, "set_policer", {"policer": "packet_in", "rate": None})
        assert off["rate"] is None
        for bad, message in (({"policer": "nope", "rate": 1}, "unknown policer"),
                             ({"policer": "digest", "rate": -1}, "non-negative"),
                             ({"policer": "digest", "rate": 1, "burst": 0}, "burst")):
            with pytest.raises(grpc.RpcError) as info:
                admin.call(channel, "set_policer", bad)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert message in (info.value.details() or "")


def test_a_digest_flood_is_capped_the_same_way() -> None:
    program = compiler.compile_text(DIGEST_ALL_P4, "digest_all")
    switch = core.Switch(cpu_port=CPU_PORT)
    switch.install_pipeline(program.p4info, program.device_config_bytes())
    switch.start()
    server = P4RuntimeServer(switch, address="127.0.0.1:0", digest_policer=PolicerConfig(RATE, BURST)).start()
    lists: list[int] = []
    try:
        address = f"127.0.0.1:{server.port}"
        with SwitchClient("s1", address, election_id=(0, 1), timeout=5,
                          on_event=lambda e: lists.append(1) if e.kind == "digest" else None) as ctl:
            (name,) = [d.preamble.name for d in program.p4info.digests]
            ctl.enable_digest(name, max_timeout_ns=0, max_list_size=1, ack_timeout_ns=0)  # a list per frame
            start = time.monotonic()
            frames = 0
            while time.monotonic() - start < 1.0:
                switch.process(1, FRAME[:6] + frames.to_bytes(6, "big") + FRAME[12:])
                frames += 1
            elapsed = time.monotonic() - start
            time.sleep(0.3)  # the server's timer thread turns the last samples into lists
            assert ctl.capabilities()  # the controller's RPCs still answer
            with grpc.insecure_channel(address) as channel:
                digest = admin.call(channel, "policers")["digest"]
                server_stats = admin.call(channel, "stats")["server"]
            _wait_for(lambda: len(lists) >= digest["passed"])
    finally:
        server.stop()
        switch.stop()
    passed, dropped = digest["passed"], digest["dropped"]
    assert frames > 4 * (BURST + RATE * (elapsed + 0.3)), f"the flood ({frames} frames) must exceed the cap"
    assert passed <= BURST + RATE * (elapsed + 0.3) + 1
    assert dropped > 0 and server_stats["digest_lists_policed"] == dropped
    assert len(lists) == passed == server_stats["digest_lists"]
