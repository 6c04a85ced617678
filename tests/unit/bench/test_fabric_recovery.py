"""`bench.fabric_runs.recovery` without a fabric: which link it downs, and what it reads from a finished run's report."""

from __future__ import annotations

from p4fabric.report import RunReport, WorkerResult, summarise

from bench.fabric_runs.recovery import summarise_recovery, tree_link


def test_the_downed_link_is_in_the_controllers_tree() -> None:
    leaf, parent = tree_link("leafspine,2,2,2")
    assert leaf == "leaf1" and parent.startswith("spine")


def _report(events: list[dict[str, object]], steps: list[float]) -> RunReport:
    report = RunReport(topology="leafspine-2x2x2", target="embedded", size=65536, count=len(steps),
                       workers=["h1", "h2"])
    report.job = {"tree": {"root": "spine1", "parent": {"leaf1": "spine1", "leaf2": "spine1", "spine1": None}}}
    results = [WorkerResult(h, r, "in-network", steps, True, stats={"retransmissions": 5})
               for r, h in enumerate(report.workers)]
    report.modes.append(summarise("in-network", results, report.size, report.count))
    report.faults = {"controller_events": events, "fired": [{"kind": "link-down", "ok": True}]}
    report.link_bytes = {"leaf1-spine1": {"in-network": 100}}
    return report


def test_summary_reads_the_rebuild_and_the_steps() -> None:
    events: list[dict[str, object]] = [
        {"kind": "link_down", "detail": "leaf1-spine1"},
        {"kind": "job_rebuilt", "job": 1, "detail": "link leaf1-spine1 down",
         "data": {"root": "spine2", "recovery_ms": 70.9}},
        {"kind": "job_rebuilt", "job": 1, "detail": "switch spine9 lost", "data": {"recovery_ms": 1.0}},
    ]
    data = summarise_recovery(_report(events, [1.0, 3.0, 1.2, 1.1]), ("leaf1", "spine1"))
    assert data["link_in_tree"] and data["root_before"] == "spine1" and data["root_after"] == "spine2"
    assert data["recovery_ms"] == [70.9] and not data["degraded"] and data["exact"]
    assert data["slowest_step_s"] == 3.0 and data["other_steps_median_s"] == 1.1
    assert data["disruption_s"] == 1.9 and data["retransmissions"] == 10
    assert data["link_bytes"] == {"leaf1-spine1": 100} and "note" not in data


def test_a_link_off_the_tree_or_a_fault_never_fired_is_visible() -> None:
    report = _report([], [1.0, 1.0])
    report.faults["fired"] = []
    data = summarise_recovery(report, ("leaf1", "spine2"))
    assert not data["link_in_tree"] and data["recovery_ms"] == [] and data["root_after"] is None
    assert "no recovery was measured" in data["note"]
