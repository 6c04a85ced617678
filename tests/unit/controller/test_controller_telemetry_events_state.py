"""Prometheus text, event log (append, read, follow), digest decoding, and the persisted state round trip."""

from __future__ import annotations

import threading
from pathlib import Path

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.events import Event, EventLog, digest_event
from controller.p4info import P4InfoHelper
from controller.resources import Grant
from controller.state import ControllerState, JobRecord, StateStore
from controller.telemetry import Sample, job_totals, to_prometheus
from controller.topologies import leaf_spine
from controller.trees import compute_tree


def test_prometheus_text_format() -> None:
    samples = [
        Sample("p4ina_agg_packets_total", (("job", "1"), ("switch", "s1")), 10, "help text"),
        Sample("p4ina_agg_drops_total", (("job", "1"), ("switch", "s1"), ("reason", "STALE")), 2, "drops"),
        Sample("p4ina_agg_packets_total", (("job", "1"), ("switch", "s2")), 5, "help text"),
        Sample("p4ina_switch_up", (("switch", 's"1'),), 1, "up"),
    ]
    text = to_prometheus(samples)
    lines = text.splitlines()
    assert lines.count("# TYPE p4ina_agg_packets_total counter") == 1
    assert "# TYPE p4ina_switch_up gauge" in lines
    assert 'p4ina_agg_packets_total{job="1",switch="s2"} 5' in lines
    assert 'p4ina_switch_up{switch="s\\"1"} 1' in lines
    assert text.endswith("\n")
    assert job_totals(samples) == {"1": {"packets": 15, "drops_stale": 2}}


def test_event_log_appends_and_follows(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    log.emit(Event("switch_lost", "leaf1", detail="UNAVAILABLE"))
    stop = threading.Event()
    seen: list[Event] = []

    def reader() -> None:
        for ev in log.follow(stop, poll=0.01, from_start=True):
            seen.append(ev)
            if len(seen) == 2:
                stop.set()

    t = threading.Thread(target=reader)
    t.start()
    log.emit(Event("job_rebuilt", job=3, data={"recovery_ms": 12.5}))
    t.join(10)
    assert not t.is_alive()
    assert [e.kind for e in seen] == ["switch_lost", "job_rebuilt"]
    assert seen[1].data == {"recovery_ms": 12.5} and seen[1].job == 3
    assert "job=3" in seen[1].line()


def test_digest_decoding_names_struct_members() -> None:
    info = p4info_pb2.P4Info()
    d = info.digests.add()
    d.preamble.id = 0x18000001
    d.preamble.name = "pfc_storm_t"
    d.type_spec.struct.name = "pfc_storm_t"
    struct = info.type_info.structs["pfc_storm_t"]
    struct.members.add(name="port")
    struct.members.add(name="prio")
    msg = p4runtime_pb2.DigestList(digest_id=0x18000001, list_id=9)
    item = msg.data.add()
    item.struct.members.add(bitstring=b"\x03")
    item.struct.members.add(bitstring=b"\x07")
    ev = digest_event("leaf1", msg, P4InfoHelper(info))
    assert ev.detail == "pfc_storm_t" and ev.data == {"list_id": 9, "items": [{"port": 3, "prio": 7}]}


def test_state_round_trip(tmp_path: Path) -> None:
    topo = leaf_spine(2, 1, 1)
    tree = compute_tree(topo, ["h1", "h2"])
    rec = JobRecord(4, "j", ["h1", "h2"], "int8", 8, None, tree, {"leaf1": Grant("leaf1", 0, 8, 1, 0)},
                    ["h1", "h2"], installed={"leaf1": ["table_entry { table_id: 1 }"]}, scale=-3)
    store = StateStore(tmp_path / "s" / "controller.json")
    with store.transaction() as state:
        state.topology = "/x/topo.yaml"
        state.jobs[4] = rec
        state.down_links.append(["leaf1", "spine1"])
    again = store.load()
    assert again.jobs[4].to_dict() == rec.to_dict() and again.jobs[4].tree == tree
    assert again.down_links == [["leaf1", "spine1"]] and again.next_job_id() == 5
    assert ControllerState.from_dict(again.to_dict()).to_dict() == again.to_dict()
