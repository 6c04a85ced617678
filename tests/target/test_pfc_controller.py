"""controller/pfc.py without a switch: settings are checked with one-line errors, the updates it writes match the
program's P4Info, digests decode into events (a deadlock's path in probe order), and the deadlock policy picks one
queue of the cycle, installs a drop there and removes it when its time is up."""

from __future__ import annotations

from typing import Any

import pytest
from aggnet import compiled_program
from p4.v1 import p4runtime_pb2

from controller.encoding import encode_int
from controller.p4info import P4InfoHelper
from controller.pfc import (
    DIGEST,
    Hop,
    PfcError,
    PfcManager,
    PortPfc,
    QueueThresholds,
    SwitchPfc,
    config_updates,
    decode_digest,
)


@pytest.fixture(scope="module")
def helper() -> P4InfoHelper:
    p4info, _ = compiled_program()
    return P4InfoHelper(p4info)


def digest_list(helper: P4InfoHelper, *values: int, widths: tuple[int, ...] = (8, 16, 16, 8, 8, 256)) -> Any:
    d = p4runtime_pb2.DigestList(digest_id=helper.digests.get(DIGEST).preamble.id, list_id=1)
    data = d.data.add()
    for value, width in zip(values, widths, strict=True):
        data.struct.members.add().bitstring = encode_int(value, width)
    return d


@pytest.mark.parametrize(("cfg", "message"), [
    (SwitchPfc(switch_id=0), "switch id 0 outside"),
    (SwitchPfc(switch_id=1, probe_priority=8), "probe priority 8"),
    (SwitchPfc(switch_id=1, ports=(PortPfc(1, action="pause"),)), "watchdog action 'pause'"),
    (SwitchPfc(switch_id=1, ports=(PortPfc(600),)), "port 600 outside"),
    (SwitchPfc(switch_id=1, ports=(PortPfc(1, detect_ms=5e6),)), "detect_ms = 5000000.0 outside"),
    (SwitchPfc(switch_id=1, thresholds=(QueueThresholds(1, 3, xoff=4, xon=4),)), "need 0 <= xon < xoff"),
    (SwitchPfc(switch_id=1, thresholds=(QueueThresholds(1, 9, xoff=4, xon=1),)), "class 9 outside"),
    (SwitchPfc(switch_id=1, thresholds=(QueueThresholds(1, 3, xoff=4, xon=1, quanta=0),)), "quanta 0 outside"),
])
def test_bad_settings_are_one_line_errors(helper: P4InfoHelper, cfg: SwitchPfc, message: str) -> None:
    with pytest.raises(PfcError, match=message) as info:
        config_updates(helper, cfg)
    assert "\n" not in str(info.value)


def test_updates_cover_every_port_pfc_may_leave_by(helper: P4InfoHelper) -> None:
    ups = config_updates(helper, SwitchPfc(
        switch_id=3, ports=(PortPfc(1, link_bps=25e9, action="alert"),),
        thresholds=(QueueThresholds(2, 7, xoff=40, xon=10, refresh_ms=1.5),), sender_ports=(4,),
        port_macs={5: 0x020000000005}))
    kinds = [(p4runtime_pb2.Update.Type.Name(u.type), u.entity.WhichOneof("entity")) for u in ups]
    assert kinds[0] == ("MODIFY", "table_entry") and ups[0].entity.table_entry.is_default_action
    sessions = sorted(u.entity.packet_replication_engine_entry.clone_session_entry.session_id
                      for u in ups if u.entity.WhichOneof("entity") == "packet_replication_engine_entry")
    assert sessions == [256 + p for p in (1, 2, 4, 5)]
    decoded = [helper.decode_table_entry(u.entity.table_entry) for u in ups if u.entity.HasField("table_entry")]
    port = next(d for d in decoded if d.table.endswith("pfc_port"))
    assert dict(port.params) == {"quantum_x65536": 1342, "detect_us": 200000, "restore_us": 200000,
                                 "wd_action": 2, "deadlock_us": 100000, "probe_interval_us": 100000,
                                 "hold_limit": 0, "backlog_xoff": 0, "backlog_quanta": 0xFFFF}
    th = next(d for d in decoded if d.table.endswith("pfc_thresholds"))
    assert dict(th.params) == {"xoff": 40, "xon": 10, "quanta": 0xFFFF, "refresh_us": 1500}


def test_digests_decode_into_events(helper: P4InfoHelper) -> None:
    (storm,) = decode_digest("s1", digest_list(helper, 1, 9, 4, 0b1000_1000, 0, 0), when=1.0)
    assert (storm.kind, storm.switch_id, storm.port, storm.classes) == ("storm", 9, 4, (3, 7))
    path = (1 << 16 | 5) << 64 | (2 << 16 | 6) << 32 | (3 << 16 | 7)   # s1 first, s3 newest
    (dl,) = decode_digest("s1", digest_list(helper, 3, 1, 5, 1 << 3, 3, path))
    assert dl.kind == "deadlock" and dl.cycle == (Hop(1, 5), Hop(2, 6), Hop(3, 7))
    with pytest.raises(PfcError, match="unknown PFC event kind 9"):
        decode_digest("s1", digest_list(helper, 9, 1, 5, 1, 0, 0))


class FakeClient:
    """Records writes; answers P4Info questions like a SwitchClient with the program's pipeline."""

    def __init__(self, helper: P4InfoHelper) -> None:
        self.p4 = helper
        self.writes: list[tuple[str, str]] = []

    def write(self, updates: list[p4runtime_pb2.Update], *, atomicity: str = "CONTINUE_ON_ERROR") -> None:
        for u in updates:
            name = self.p4.tables.by(u.entity.table_entry.table_id).preamble.name if u.entity.HasField(
                "table_entry") else "pre"
            self.writes.append((p4runtime_pb2.Update.Type.Name(u.type), name))

    def enable_digest(self, name: str, **config: int) -> None:
        self.writes.append(("DIGEST", name))


def test_policy_breaks_on_the_lowest_switch_id_and_restores(helper: P4InfoHelper) -> None:
    clients = {n: FakeClient(helper) for n in ("a", "b", "c")}
    seen: list[str] = []
    mgr = PfcManager(clients, break_ms=100, on_event=lambda kind, _what: seen.append(kind))
    for i, name in enumerate(("c", "a", "b")):
        mgr.configure(name, SwitchPfc(switch_id=i + 1))     # c = 1, a = 2, b = 3
    for c in clients.values():
        c.writes.clear()
    path = (2 << 16 | 1) << 64 | (3 << 16 | 1) << 32 | (1 << 16 | 1)
    for reporter in ("a", "b"):                             # two switches report the same cycle
        mgr.on_digest(reporter, digest_list(helper, 3, 2, 1, 1 << 3, 3, path))
    assert clients["c"].writes == [("INSERT", "P4inaEgress.pfc_gen.pfc_queue_drop")]
    assert clients["a"].writes == clients["b"].writes == []
    assert seen == ["deadlock", "break", "deadlock"]
    (breaker,) = mgr.breakers.values()
    assert mgr.tick(breaker.until - 0.01) == [] and mgr.tick(breaker.until) == [breaker]
    assert clients["c"].writes[-1] == ("DELETE", "P4inaEgress.pfc_gen.pfc_queue_drop")
    with pytest.raises(PfcError, match="unknown switch 'z'"):
        mgr.configure("z", SwitchPfc(switch_id=4))
