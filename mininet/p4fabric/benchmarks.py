"""Fabric benchmarks for `p4ina bench` (needs root): on an emulated leaf-spine with 4 workers, all-reduce time,
goodput and bytes per link in-network vs the host ring, a loss sweep, and recovery after a spine is killed
(detection to rebuilt tree, as the controller's event log records it, and the step time around it).

Each point is one `p4ina run` (the same `Runner`); the numbers are the runs' reports, summarised."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from p4fabric.faults import build_plan
from p4fabric.report import RunReport
from p4fabric.runner import Runner, RunOptions

TOPO = "leafspine,2,2,2"


def unavailable() -> str | None:
    """Why this benchmark cannot run here (None when it can)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth pairs)"
    try:
        import controller.app  # noqa: F401
        import hostagent.worker  # noqa: F401
    except ImportError as exc:
        return f"needs every layer: {exc}"
    return None


def _run(out: Path, **options: Any) -> RunReport:
    return Runner(RunOptions(topo=TOPO, out=out, show_progress=False, **options), log=lambda _text: None).run()


def _mode(report: RunReport, name: str) -> dict[str, Any]:
    summary = report.mode(name)
    if summary is None:
        return {}
    links = {link: counts.get(name, 0) for link, counts in report.link_bytes.items()}
    return {"median_seconds": summary.median_seconds, "goodput_gbps": summary.goodput_gbps,
            "retransmissions": summary.retransmissions, "checksum_failures": summary.checksum_failures,
            "exact": summary.exact, "bytes_total": sum(links.values()), "bytes_per_link": links}


def run(quick: bool) -> dict[str, Any]:
    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    sizes = [16384] if quick else [16384, 131072, 1 << 20]
    losses = [0.0, 2.0] if quick else [0.0, 1.0, 2.0, 5.0]
    count = 1 if quick else 3
    started = time.perf_counter()
    data: dict[str, Any] = {"topology": TOPO, "workers": 4, "target": "embedded", "quick": quick}
    with tempfile.TemporaryDirectory(prefix="p4ina-bench-") as tmp:
        base = Path(tmp)
        comparison: list[dict[str, Any]] = []
        for size in sizes:
            report = _run(base / f"cmp-{size}", size=size, count=count, modes=("ring", "innet"))
            comparison.append({"size": size, "in_network": _mode(report, "in-network"),
                               "ring": _mode(report, "ring")})
        data["in_network_vs_ring"] = comparison
        sweep: list[dict[str, Any]] = []
        for loss in losses:
            plan = build_plan(loss=str(loss)) if loss else build_plan()
            report = _run(base / f"loss-{loss:g}", size=sizes[0], count=count, faults=plan)
            sweep.append({"loss_percent": loss, **_mode(report, "in-network")})
        data["loss_sweep"] = sweep
        size = 65536
        report = _run(base / "recovery", size=size, count=3, faults=build_plan(kill_switch=["spine1@2"]))
        rebuilt = [e for e in report.faults.get("controller_events", []) if e.get("kind") == "job_rebuilt"]
        innet = report.mode("in-network")
        recovery_ms = [e.get("data", {}).get("recovery_ms") for e in rebuilt]
        data["recovery"] = {
            "size": size, "fault": "kill spine1 (tree root) at 2 s", **_mode(report, "in-network"),
            "step_seconds": innet.step_seconds if innet is not None else [],
            "recovery_ms": recovery_ms, "fired": report.faults.get("fired", []),
        }
    first_innet = comparison[0]["in_network"]
    first_ring = comparison[0]["ring"]
    data["summary"] = {
        "size": sizes[0],
        "in_network_ms": round(1000 * float(first_innet.get("median_seconds", 0.0)), 1),
        "ring_ms": round(1000 * float(first_ring.get("median_seconds", 0.0)), 1),
        "loss_2pct_exact": next((p["exact"] for p in sweep if p["loss_percent"] == 2.0), None),
        "recovery_ms": recovery_ms[0] if recovery_ms else None,
        "seconds": round(time.perf_counter() - started, 1),
    }
    return data
