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

from bench.scale.model import CALIBRATED, Measurement, Params, calibrate, predict
from hostagent.protocol import ELEMENT_SIZE, FMT_INT32, values_len
from p4fabric.faults import build_plan
from p4fabric.report import RunReport
from p4fabric.runner import Runner, RunOptions

TOPO = "leafspine,2,2,2"
#: Workers per calibration run; the model is fitted on the first count and predicts the others.
CALIBRATION_WORKERS = (2, 4, 8)
#: How close (relative) a prediction must come to the measured time to count as reproduced (issue 12).
CALIBRATION_TOLERANCE = 0.25
#: The veths carry no rate limit, so the links' effective rate (host stacks, switches forwarding ring packets) is
#: fitted along with the model's per-message and per-packet costs.
CALIBRATED_PARAMS = (*CALIBRATED, "link_gbps")
#: The model's modes under the names `RunReport.mode` uses.
_MODEL_MODES = {"innet": "in-network", "ring": "ring"}


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


def _run(out: Path, topo: str = TOPO, **options: Any) -> RunReport:
    return Runner(RunOptions(topo=topo, out=out, show_progress=False, **options), log=lambda _text: None).run()


def emulation_params(slots: int = 64, fmt: int = FMT_INT32) -> Params:
    """The model's fixed knobs for the emulated fabric: what the runner configures, not fitted.

    Packets carry one slot's values, each worker keeps `slots` chunks in flight, and the veths are not
    rate-limited, so the link rate is only a starting point for `calibrate`, like the other free parameters."""
    return Params(link_gbps=10.0, payload_bytes=values_len(fmt), window_packets=slots)


def calibration_runs(base: Path, sizes: list[int], count: int,
                     retransmissions: dict[tuple[str, int, float], int] | None = None) -> list[Measurement]:
    """Leaf-spine runs with 2 leaves, 1 spine and N/2 workers per leaf, in-network and ring, one point per mode."""
    points: list[Measurement] = []
    for workers in CALIBRATION_WORKERS:
        per_leaf = workers // 2
        topo = f"leafspine,2,1,{per_leaf}"
        for size in sizes:
            report = _run(base / f"cal-{workers}-{size}", topo=topo, size=size, count=count,
                          modes=tuple(_MODEL_MODES))
            for model_mode, name in _MODEL_MODES.items():
                summary = report.mode(name)
                if summary is None or summary.median_seconds <= 0:
                    raise RuntimeError(f"calibration run {topo} size {size} has no {name} time")
                if retransmissions is not None:
                    retransmissions[(model_mode, workers, float(size * ELEMENT_SIZE[FMT_INT32]))] = \
                        summary.retransmissions
                points.append(Measurement(model_mode, "leafspine", workers, float(size * ELEMENT_SIZE[FMT_INT32]),
                                          summary.median_seconds, hosts_per_leaf=per_leaf))
    return points


def calibration_report(points: list[Measurement], params: Params,
                       retransmissions: dict[tuple[str, int, float], int] | None = None) -> dict[str, Any]:
    """Fit on the smallest worker count, predict every point, and say which predictions are within tolerance."""
    fit_on = [m for m in points if m.hosts == CALIBRATION_WORKERS[0]]
    cal = calibrate(fit_on, params, free=CALIBRATED_PARAMS)
    rows: list[dict[str, Any]] = []
    for m in points:
        predicted = predict(m, cal.params)
        error = (predicted - m.seconds) / m.seconds
        rows.append({"algorithm": m.algorithm, "workers": m.hosts, "bytes": m.message_bytes,
                     "measured_s": m.seconds, "predicted_s": predicted, "rel_error": error,
                     "fitted_on": m.hosts == CALIBRATION_WORKERS[0],
                     "within_tolerance": abs(error) <= CALIBRATION_TOLERANCE,
                     "retransmissions": (retransmissions or {}).get((m.algorithm, m.hosts, m.message_bytes))})
    held_out = [r for r in rows if not r["fitted_on"]]
    return {"fitted": cal.fitted, "fit_mean_abs_rel_error": cal.mean_abs_rel_error,
            "tolerance": CALIBRATION_TOLERANCE, "points": rows,
            "held_out_within_tolerance": sum(r["within_tolerance"] for r in held_out),
            "held_out_points": len(held_out),
            "held_out_max_abs_rel_error": max((abs(r["rel_error"]) for r in held_out), default=0.0)}


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
        cal_sizes = [4096, 32768] if quick else [4096, 32768, 262144]
        retx: dict[tuple[str, int, float], int] = {}
        points = calibration_runs(base, cal_sizes, count, retx)
        data["calibration"] = calibration_report(points, emulation_params(), retx)
    first_innet = comparison[0]["in_network"]
    first_ring = comparison[0]["ring"]
    data["summary"] = {
        "size": sizes[0],
        "in_network_ms": round(1000 * float(first_innet.get("median_seconds", 0.0)), 1),
        "ring_ms": round(1000 * float(first_ring.get("median_seconds", 0.0)), 1),
        "loss_2pct_exact": next((p["exact"] for p in sweep if p["loss_percent"] == 2.0), None),
        "recovery_ms": recovery_ms[0] if recovery_ms else None,
        "model_held_out_within_25pct": (f"{data['calibration']['held_out_within_tolerance']}"
                                        f"/{data['calibration']['held_out_points']}"),
        "seconds": round(time.perf_counter() - started, 1),
    }
    return data
