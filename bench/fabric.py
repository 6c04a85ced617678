"""Fabric benchmarks for `p4ina bench` (needs root), on emulated leaf-spines with the embedded target:

- `sweep`: all-reduce time, goodput and bytes per link vs tensor size and workers, in-network int32/int16/int8 vs
  the host ring vs gloo, all modes of a point in one run (`bench.fabric_runs.sweep`);
- `rates`: the link-rate sweep, 8 workers and 4 MB on links shaped to several `--bw` rates, every mode side by side
  in one run per rate, each with its bandwidth bound (`bench.fabric_runs.rates`);
- `headline`: the same comparison at 8 workers and 4 MB on unshaped links, the README's ratios;
- `demo`: what `p4ina demo` runs (its fabric, size and modes);
- `loss_sweep`: in-network goodput (against the lossless run of the same round, rounds alternated), resends and
  how they were found, under loss on every link;
- `recovery`, `link_down_recovery`: the controller's recovery after the tree's root spine is killed mid-run, and
  after a tree link goes down (`bench.fabric_runs.recovery`);
- `calibration_runs`, `calibration`: one more ring + in-network int32 run per calibration point, and the at-scale
  model fitted to the median of those and the sweep's (`bench.fabric_runs.calibration`), with its per-point error.

Every number is a run's report (`p4ina run`), summarised; every row carries its correctness bit."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from p4fabric.faults import build_plan
from p4fabric.report import RunReport
from p4fabric.runner import DEFAULT_PROGRAM, Runner, RunOptions, run_defines, run_values

from bench.fabric_runs.calibration import MODEL_ALGORITHM, calibration_report, emulation_params, measurement
from bench.fabric_runs.rates import FULL_RATES, QUICK_RATES, rate_sweep, resent_fraction
from bench.fabric_runs.recovery import link_down_recovery
from bench.fabric_runs.sweep import BENCH_OPTIONS, INNET_MODE, mode_row, ratios, run_point, sweep
from p4ina.targets import get_target

TOPO = "leafspine,2,2,2"  # loss and recovery runs: 4 workers, 2 spines (a spine can die and the tree move)
HEADLINE_WORKERS, HEADLINE_ELEMENTS = 8, 1 << 20  # 8 workers, 4 MB of float32


@dataclass(frozen=True)
class Plan:
    """What one `p4ina bench` run measures on the fabric."""

    workers: tuple[int, ...]
    sizes: tuple[int, ...]  # float32 elements
    count: int  # steps per run (the median is reported)
    losses: tuple[float, ...]  # percent
    budget_s: float | None  # skip a sweep mode whose next size would exceed this per step
    headline_count: int
    #: Extra runs of ring and in-network int32 (the modes the model has) at these sizes, for every worker count:
    #: single runs here differ by up to 30% from one another, so the fit uses the median over the sweep's run and
    #: these.
    calibration_sizes: tuple[int, ...]
    calibration_repeats: int
    rates: tuple[float, ...] = ()  # Mbit/s of the link-rate sweep
    #: Steps per mode at each rate, the median reported: a single step there includes whatever else the two cores
    #: did at that moment (one-step in-network runs at 25 Mbit/s ranged 74-90% of the bound over four bench runs).
    rate_count: int = 3
    #: The loss sweep's all-reduce (float32 elements) and steps per loss rate: the headline's 4 MB, so that a step
    #: is many round trips long (at 1 MB a step is 4-5 of them and one tail loss costs a probe timeout: 1% then
    #: measured 0.71 of lossless against 0.95 at 4 MB, docs/protocol.md), and four steps for a median that one
    #: unlucky step does not decide.
    loss_size: int = HEADLINE_ELEMENTS
    loss_count: int = 4
    #: Alternated rounds of the loss sweep's rates below 5% (each compared with its own round's lossless run).
    loss_rounds: int = 3


QUICK = Plan(workers=(2, 8), sizes=(16384, 65536), count=2, losses=(0.0, 1.0, 5.0), budget_s=None, headline_count=3,
             calibration_sizes=(), calibration_repeats=0, rates=QUICK_RATES, rate_count=3)
FULL = Plan(workers=(2, 4, 8, 16), sizes=tuple(16384 * 4**i for i in range(6)), count=3,  # 64 KB .. 64 MB
            losses=(0.0, 0.5, 1.0, 2.0, 5.0), budget_s=60.0, headline_count=3,
            calibration_sizes=(16384, 65536, 262144), calibration_repeats=2, rates=FULL_RATES, rate_count=3)
DEMO_TOPO, DEMO_ELEMENTS = "leafspine,2,2,2", 1 << 20  # p4fabric.cli's demo


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


def _run(out: Path, options: Mapping[str, Any], topo: str = TOPO, **run: Any) -> RunReport:
    return Runner(RunOptions(topo=topo, out=out, **options, **run),
                  log=lambda _text: None).run()


def loss_sweep(base: Path, losses: tuple[float, ...], size: int, count: int, options: Mapping[str, Any],
               rounds: int = 1, once_from: float = 5.0) -> list[dict[str, Any]]:
    """In-network int32 under `loss` % on every link (both directions of every host and switch link): goodput
    relative to lossless, resends over packets sent, and how the losses were found. The pool and window are the
    options' (`slots`, `window`: docs/protocol.md compares them).

    The rates run in `rounds` alternated rounds (0% first in each), and a rate's goodput is compared with the
    lossless run of its own round: one lossless run as the reference for every rate made the ratio move with
    whatever else the two cores did during that one run (1% measured 0.59 and 0.70 of lossless in two bench runs,
    0.72-0.84 in alternated pairs). Rates from `once_from` up, where the criterion is completing exactly, run in the
    first round only. A rate's row is its first round's run, with `rounds` (every round's median step, goodput
    and ratio) and `goodput_vs_lossless` the median of the rounds' ratios."""
    per_rate: dict[float, list[dict[str, Any]]] = {loss: [] for loss in losses}
    for i in range(max(rounds, 1)):
        for loss in losses:
            if i and loss >= once_from:
                continue
            per_rate[loss].append(_loss_run(base / f"loss-{loss:g}-{i}", loss, size, count, options))
    return paired_loss_rows(per_rate)


def _loss_run(out: Path, loss: float, size: int, count: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """One in-network int32 run under `loss` % on every link, as a loss-sweep row (without the ratio)."""
    report = _run(out, options, size=size, count=count, faults=build_plan(loss=str(loss)) if loss else build_plan())
    summary = report.mode(INNET_MODE["int32"])
    if summary is None:
        return {"loss_percent": loss, "error": "; ".join(report.errors) or "no in-network result"}
    row = {"loss_percent": loss, **mode_row(report, summary, len(report.workers)),
           "resent_fraction": resent_fraction(report, summary.mode)}
    workers = [r for r in report.worker_results if r.mode == summary.mode]
    for key in ("fast_retransmissions", "timer_retransmissions", "probes", "timeout_resets", "loss_decreases"):
        row[key] = int(sum(r.stats.get(key, 0) for r in workers))
    # Where a worker's time went, per call (the warm-up included): the next chunk waiting for its slot or the
    # window, and the drain after the last new chunk (docs/protocol.md, "Flow control and loss recovery").
    for key in ("window", "srtt_ms", "rto_ms"):  # after the last call, per worker
        row[f"final_{key}"] = [r.stats.get(key) for r in workers]
    calls = sum(r.stats.get("calls", 0) for r in workers)
    for key in ("blocked_slot_seconds", "blocked_window_seconds", "drain_seconds"):
        total = sum(r.stats.get(key, 0.0) for r in workers)
        row[f"{key.removesuffix('_seconds')}_ms_per_call"] = round(1000 * total / calls, 2) if calls else None
    return row


def paired_loss_rows(per_rate: Mapping[float, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per loss rate from its runs in round order (`loss_sweep`): the first round's row, every round's
    median step and goodput against the same round's lossless run, and the median of those ratios. A round whose
    lossless run failed or was not exact gives no ratio."""
    lossless = [r.get("goodput_gbps") if r.get("correct") else None for r in per_rate.get(0.0, [])]
    rows = []
    for runs in per_rate.values():
        if not runs:
            continue
        row = dict(runs[0])
        rounds = []
        for i, run in enumerate(runs):
            entry: dict[str, Any] = {"median_seconds": run.get("median_seconds"), "goodput_gbps": run.get("goodput_gbps"),
                                     "exact": run.get("exact"), "error": run.get("error")}
            reference = lossless[i] if i < len(lossless) else None
            if reference and run.get("goodput_gbps") is not None:
                entry["goodput_vs_lossless"] = round(run["goodput_gbps"] / reference, 3)
            rounds.append({k: v for k, v in entry.items() if v is not None})
        ratios = [r["goodput_vs_lossless"] for r in rounds if "goodput_vs_lossless" in r]
        if ratios:
            row["goodput_vs_lossless"] = round(statistics.median(ratios), 3)
        if len(runs) > 1:
            row["rounds"] = rounds
            goodputs = [r["goodput_gbps"] for r in rounds if "goodput_gbps" in r]
            if goodputs:
                row["median_goodput_gbps"] = statistics.median(goodputs)
            # every round's result counts: one inexact or failed run makes the rate's row incorrect
            row["correct"] = all(r.get("correct", False) for r in runs)
        rows.append(row)
    return rows


def demo(base: Path, options: Mapping[str, Any]) -> dict[str, Any]:
    """What `p4ina demo` measures (its fabric, 1 M floats, ring then in-network, 3 steps)."""
    report = _run(base / "demo", options, topo=DEMO_TOPO, size=DEMO_ELEMENTS, count=3, modes=("ring", "innet"))
    rows = [mode_row(report, m, len(report.workers)) for m in report.modes]
    at = {r["mode"]: r["median_seconds"] for r in rows if r["median_seconds"] > 0}
    ratio = at["ring"] / at[INNET_MODE["int32"]] if "ring" in at and INNET_MODE["int32"] in at else None
    return {"topology": DEMO_TOPO, "elements": DEMO_ELEMENTS, "rows": rows, "errors": report.errors,
            "ring_over_in_network_time": ratio}


def spine_recovery(base: Path, options: Mapping[str, Any]) -> dict[str, Any]:
    size = 65536
    report = _run(base / "recovery", options, size=size, count=3, faults=build_plan(kill_switch=["spine1@2"]))
    rebuilt = [e for e in report.faults.get("controller_events", []) if e.get("kind") == "job_rebuilt"]
    innet = report.mode(INNET_MODE["int32"])
    return {"size": size, "fault": "kill spine1 (tree root) at 2 s",
            **(mode_row(report, innet, len(report.workers)) if innet else {}),
            "recovery_ms": [e.get("data", {}).get("recovery_ms") for e in rebuilt],
            "fired": report.faults.get("fired", [])}


def headline(base: Path, count: int, options: Mapping[str, Any]) -> dict[str, Any]:
    report = run_point(base / "headline", HEADLINE_WORKERS, HEADLINE_ELEMENTS, count, fmts=("int32", "int8"),
                       options=options)
    rows = [mode_row(report, m, HEADLINE_WORKERS) for m in report.modes]
    return {"workers": HEADLINE_WORKERS, "elements": HEADLINE_ELEMENTS, "rows": rows, "errors": report.errors,
            "ratios": ratios(rows, HEADLINE_WORKERS, HEADLINE_ELEMENTS)}


def calibration_runs(base: Path, plan: Plan, options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of the extra ring + in-network int32 runs the model's fit uses besides the sweep's."""
    rows = []
    for repeat in range(plan.calibration_repeats):
        for workers in plan.workers:
            for size in plan.calibration_sizes:
                report = run_point(base / f"cal-{repeat}-{workers}-{size}", workers, size, plan.count,
                                   modes=("ring", "innet"), fmts=("int32",), options=options)
                rows += [mode_row(report, m, workers) for m in report.modes]
    return rows


def calibration(rows: list[dict[str, Any]], values: int = 64) -> dict[str, Any]:
    """The model fitted to the ring and in-network int32 rows (the modes it models): per (mode, workers, size), the
    median over the runs that measured it."""
    runs: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("mode") in MODEL_ALGORITHM and row.get("median_seconds", 0) > 0 and row.get("correct"):
            runs.setdefault((row["mode"], row["workers"], row["elements"]), []).append(row)
    points, retx = [], {}
    for (mode, workers, elements), measured in sorted(runs.items()):
        m = measurement(mode, workers, elements, statistics.median(r["median_seconds"] for r in measured))
        points.append(m)
        retx[(m.algorithm, m.hosts, m.message_bytes)] = sum(r["retransmissions"] for r in measured)
    report = calibration_report(points, emulation_params(window=BENCH_OPTIONS["window"], values=values), retx)
    report["runs_per_point"] = {f"{mode} {workers}w {elements}": [r["median_seconds"] for r in measured]
                                for (mode, workers, elements), measured in sorted(runs.items())}
    return report


def run(quick: bool) -> dict[str, Any]:
    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    plan = QUICK if quick else FULL
    started = time.perf_counter()
    data: dict[str, Any] = {"target": "embedded", "quick": quick, "plan": asdict(plan)}
    with tempfile.TemporaryDirectory(prefix="p4ina-bench-") as tmp:
        base = Path(tmp)
        # One compile for every run (the runs differ in fabric and options, not in program), for the values per
        # packet `p4ina run` uses on this target.
        values = run_values("embedded")
        compiled = get_target("embedded").compile(DEFAULT_PROGRAM, base / "build", defines=run_defines("embedded", values))
        options = {**BENCH_OPTIONS, "compiled": compiled, "values": values}
        data["values_per_packet"] = values
        data["rates"] = rate_sweep(base, plan.rates, plan.rate_count, options)
        data["headline"] = headline(base, plan.headline_count, options)
        data["demo"] = demo(base, options)
        data["loss_sweep"] = loss_sweep(base, plan.losses, plan.loss_size, plan.loss_count, options,
                                        rounds=plan.loss_rounds)
        data["sweep"] = sweep(base, plan.workers, plan.sizes, plan.count, budget_s=plan.budget_s, options=options)
        data["calibration_runs"] = calibration_runs(base, plan, options)
        # The fault runs come last; one that cannot run (a switch that does not start under load) is recorded
        # as an error rather than losing every number measured before it.
        data["recovery"] = _recorded(lambda: spine_recovery(base, options))
        data["link_down_recovery"] = _recorded(lambda: link_down_recovery(base, quick, options=options))
    data["calibration"] = calibration(data["sweep"] + data["calibration_runs"], data["values_per_packet"])
    data["summary"] = _summary(data, time.perf_counter() - started)
    return data


def _recorded(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return fn()
    except Exception as exc:  # recorded in the result; `_summary` then reports the run as not all correct
        return {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}


def _summary(data: dict[str, Any], seconds: float) -> dict[str, Any]:
    head = data["headline"]["ratios"]
    cal = data["calibration"]
    killed = data["recovery"].get("recovery_ms") or [None]
    loss = {f"{r['loss_percent']:g}%": r.get("goodput_vs_lossless") for r in data["loss_sweep"]}
    at25 = data["rates"]["speedups"].get("25", {})
    return {
        # scalars first: the console table shows a module's first six
        "ring_over_innet_25mbps": at25.get("ring_over_int32"),
        "gloo_over_innet_25mbps": at25.get("gloo_over_int32"),
        "rate_speedups": data["rates"]["speedups"],
        "innet_int32_highest_rate_at_80pct_of_bound": data["rates"]["innet_int32_highest_rate_at_80pct"],
        "demo_ring_over_innet": data["demo"]["ring_over_in_network_time"],
        "loss_goodput_vs_lossless": loss,
        "ring_over_innet_8w_4MB": round(head.get("ring_over_in_network_time", 0.0), 3),
        "gloo_over_innet_8w_4MB": round(head.get("gloo_over_in_network_time", 0.0), 3),
        "int8_over_int32_time": round(head.get("int8_over_int32_time", 0.0), 3),
        "int8_over_int32_bytes": round(head.get("int8_over_int32_host_link_bytes", 0.0), 3),
        "model_within_25pct": f"{cal['within_tolerance']}/{cal['judged_points']}",
        "recovery_ms": killed[0],
        # a row is a measured mode (its `correct`), a mode skipped for the budget, or a run's error
        "all_correct": all(r.get("correct", "error" not in r) for r in data["sweep"] + data["headline"]["rows"]
                           + data["rates"]["rows"] + data["demo"]["rows"] + data["loss_sweep"])
        and not data["headline"]["errors"] and not data["rates"]["errors"] and not data["demo"]["errors"]
        and "error" not in data["recovery"] and "error" not in data.get("link_down_recovery", {}),
        "seconds": round(seconds, 1),
    }
