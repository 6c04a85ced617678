"""The controller's P4Runtime client against the embedded server: mastership hand-over both ways, per-update
errors decoded from the real server's `grpc-status-details-bin`, and a refused non-primary write."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import p4switch.server.device as device_mod
import p4switch.server.server as server_mod
from controller.client import StreamEvent, SwitchClient, entity, tls_credentials, update
from controller.exceptions import MastershipError, RpcError, SwitchUnavailableError
from controller.p4info import P4InfoHelper, load_p4info


@pytest.fixture
def address() -> Iterator[str]:
    srv = server_mod.P4RuntimeServer(device_mod.StateDevice(), address="127.0.0.1:0").start()
    yield f"127.0.0.1:{srv.port}"
    srv.stop()


def _wait(pred: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_mastership_moves_to_the_newer_controller_and_back(address: str, conformance_dir: Path) -> None:
    helper = P4InfoHelper(load_p4info(conformance_dir / "p4info" / "runtime_tables.p4info.txtpb"))
    events: queue.Queue[StreamEvent] = queue.Queue()
    old = SwitchClient("s1", address, election_id=(0, 10), on_event=events.put, timeout=10).connect()
    try:
        old.set_pipeline(helper.p4info, b"")
        route = helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": "10.0.0.0/8"}, "I.to_port", {"port": 1})
        with SwitchClient("s1", address, election_id=(0, 20), timeout=10) as new:
            assert _wait(lambda: not old.is_primary)
            with pytest.raises(MastershipError):
                old.write([update("INSERT", entity(route))])
            new.write([update("INSERT", entity(route))])
            with pytest.raises(RpcError) as info:
                new.write([update("DELETE", entity(helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": "11.0.0.0/8"}))),
                           update("INSERT", entity(route))])
            assert [(u.index, u.code_name) for u in info.value.updates] == [(0, "NOT_FOUND"), (1, "ALREADY_EXISTS")]
        assert _wait(lambda: old.is_primary), "the switch hands mastership back when the newer controller leaves"
        kinds = []
        while not events.empty():
            kinds.append(events.get().kind)
        assert kinds == ["primary", "mastership_lost", "primary"]
        old.write([update("DELETE", entity(route))])
        assert old.read_table("I.ipv4_lpm") == []
    finally:
        old.close()


def test_mutual_tls_to_the_embedded_server(tmp_path: Path) -> None:
    import p4ina.pki as pki_mod
    pki = pki_mod.make_fabric_pki(tmp_path, {"s1": []}, ["controller"])
    tls = server_mod.TlsOptions(cert=pki.servers["s1"].cert, key=pki.servers["s1"].key, client_ca=pki.ca_cert)
    srv = server_mod.P4RuntimeServer(device_mod.StateDevice(), address="127.0.0.1:0", tls=tls).start()
    address = f"127.0.0.1:{srv.port}"
    try:
        creds = tls_credentials(str(pki.ca_cert), str(pki.clients["controller"].cert),
                                str(pki.clients["controller"].key))
        with SwitchClient("s1", address, timeout=10, credentials=creds) as c:
            assert c.is_primary and c.capabilities()
        with pytest.raises(SwitchUnavailableError, match="no P4Runtime server"):
            SwitchClient("s1", address, timeout=3).connect()  # plain text to a TLS port
        with pytest.raises(SwitchUnavailableError):  # TLS without a client certificate: mutual TLS refuses
            SwitchClient("s1", address, timeout=3, credentials=tls_credentials(str(pki.ca_cert))).connect()
    finally:
        srv.stop()
