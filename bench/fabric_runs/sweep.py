"""All-reduce time, goodput and bytes per link versus tensor size and worker count, for every collective on the same
emulated fabric and target: in-network int32/int16/int8, the host ring and torch's gloo (issue 12).

Each (workers, size) point is one `p4ina run` on `leafspine,2,1,workers/2` that runs every mode back to back on the
same fabric, so the modes of a point are measured side by side. A point whose previous size already took longer than
the budget per step is not run for the modes that were that slow (the growth with size is at least linear, so they
would blow the budget); the rows say so instead of inventing a number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from p4fabric.report import BYTES_PER_ELEMENT, ModeSummary, RunReport
from p4fabric.runner import EMBEDDED_DEFAULT_SLOTS, Runner, RunOptions

FORMATS = ("int32", "int16", "int8")
#: Report mode names of the in-network formats (p4fabric.runner names int32 plain "in-network").
INNET_MODE = {"int32": "in-network", "int16": "in-network int16", "int8": "in-network int8"}
HOST_MODES = ("ring", "gloo")
#: Run settings every fabric benchmark shares, `p4ina run`'s defaults on the embedded target: a pool of 256 slots and
#: a window of half of it (a lost chunk holds up only its slot's next use). The emulated switches' round trips are
#: tens of milliseconds, and a window of 128 chunks made in-network steps about a fifth shorter than 32 or 64
#: (docs/protocol.md, "The pool on the embedded fabric"). The retransmission timeout keeps `p4ina run`'s floor (10
#: ms): losses are found by later RESULTs and the timer (at least 2 SRTT, fired only once the socket holds no
#: RESULT) is the last resort (docs/protocol.md, "Flow control and loss recovery"). A benchmark adds `compiled` and
#: `values` (the program compiled once for all runs).
BENCH_OPTIONS: dict[str, Any] = {"slots": EMBEDDED_DEFAULT_SLOTS, "window": EMBEDDED_DEFAULT_SLOTS // 2,
                                  "show_progress": False, "plots": False}


def topo_for(workers: int) -> str:
    """Two leaves under one spine, half the workers on each (one leaf for a single worker)."""
    if workers < 2 or workers % 2:
        raise ValueError(f"the sweep's leaf-spine needs an even worker count >= 2, got {workers}")
    return f"leafspine,2,1,{workers // 2}"


def run_point(out: Path, workers: int, size: int, count: int, *, modes: Sequence[str] = (*HOST_MODES, "innet"),
              fmts: Sequence[str] = FORMATS, options: Mapping[str, Any] = BENCH_OPTIONS) -> RunReport:
    run = RunOptions(topo=topo_for(workers), out=out, size=size, count=count, modes=tuple(modes), fmts=tuple(fmts),
                     **options)
    return Runner(run, log=lambda _text: None).run()


def ring_host_link_factor(workers: int) -> float:
    """Bytes a host link carries (both directions) per tensor byte for a ring all-reduce: 2(N-1)/N each way."""
    return 2 * 2 * (workers - 1) / workers


def _is_host(node: str) -> bool:
    return node.startswith("h") and node[1:].isdigit()


def link_bytes(report: RunReport, mode: str) -> dict[str, float]:
    """Mean bytes per host link and per switch-to-switch link that `mode` moved (both directions)."""
    host: list[int] = []
    fabric: list[int] = []
    for link, per_mode in report.link_bytes.items():
        a, _, b = link.partition("-")
        (host if _is_host(a) or _is_host(b) else fabric).append(per_mode.get(mode, 0))
    return {"bytes_per_host_link": sum(host) / len(host) if host else 0.0,
            "bytes_per_switch_link": sum(fabric) / len(fabric) if fabric else 0.0}


def mode_row(report: RunReport, summary: ModeSummary, workers: int) -> dict[str, Any]:
    """One measured mode of a run. Link counters cover the whole mode: its `count` steps and the warm-up, an
    all-reduce of the same size (p4fabric.hostproc.run_steps), so bytes per link per all-reduce are the totals
    over `count` + 1."""
    tensor_bytes = report.size * BYTES_PER_ELEMENT
    links = {k: v / (report.count + 1) for k, v in link_bytes(report, summary.mode).items()}
    return {
        "mode": summary.mode, "fmt": summary.fmt, "workers": workers, "elements": report.size,
        "bytes": tensor_bytes, "steps": summary.steps, "median_seconds": summary.median_seconds,
        "step_seconds": summary.step_seconds, "goodput_gbps": summary.goodput_gbps,
        "retransmissions": summary.retransmissions, "correct": summary.correct, "exact": summary.exact,
        "max_abs_error": summary.max_abs_error, "error_bound": summary.error_bound, **links,
        "host_link_bytes_per_tensor_byte": links["bytes_per_host_link"] / tensor_bytes,
        "ring_theory_host_link_factor": ring_host_link_factor(workers),
    }


def sweep(base: Path, workers_list: Sequence[int], sizes: Sequence[int], count: int, *,
          budget_s: float | None = None, options: Mapping[str, Any] = BENCH_OPTIONS,
          log: Callable[[str], None] = lambda _text: None) -> list[dict[str, Any]]:
    """Every worker count x size; rows of measured modes, plus `skipped` rows for modes over the budget."""
    rows: list[dict[str, Any]] = []
    for workers in workers_list:
        last: dict[str, tuple[int, float]] = {}  # mode -> (size, median seconds) of its largest run so far
        for size in sorted(sizes):
            over = {mode for mode, (prev_size, t) in last.items()
                    if budget_s is not None and t * size / prev_size > budget_s}
            fmts = [f for f in FORMATS if INNET_MODE[f] not in over]
            modes = [m for m in HOST_MODES if m not in over] + (["innet"] if fmts else [])
            for mode in sorted(over):
                prev_size, t = last[mode]
                rows.append({"mode": mode, "workers": workers, "elements": size, "bytes": size * BYTES_PER_ELEMENT,
                             "skipped": f"predicted {t * size / prev_size:.0f} s per step (linear in size from "
                                        f"{t:.1f} s at {prev_size:,} elements) > budget {budget_s:g} s"})
            if not modes:
                continue
            log(f"sweep: {workers} workers, {size:,} elements: {', '.join(modes)} {'/'.join(fmts)}")
            report = run_point(base / f"sweep-{workers}-{size}", workers, size, count, modes=modes,
                               fmts=fmts or ("int32",), options=options)
            for summary in report.modes:
                rows.append(mode_row(report, summary, workers))
                if summary.median_seconds > 0:
                    last[summary.mode] = (size, summary.median_seconds)
            rows.extend({"mode": e.split(":", 1)[0], "workers": workers, "elements": size, "error": e}
                        for e in report.errors)
    return rows


def ratios(rows: Sequence[dict[str, Any]], workers: int, elements: int) -> dict[str, float]:
    """Time ratios at one point, measured in the same run: how many times faster in-network is than ring and gloo,
    and how int8 compares with int32 in time and in bytes per host link."""
    at = {r["mode"]: r for r in rows if r.get("workers") == workers and r.get("elements") == elements
          and "median_seconds" in r and r["median_seconds"] > 0}
    out: dict[str, float] = {}
    innet, int8 = at.get(INNET_MODE["int32"]), at.get(INNET_MODE["int8"])
    for other in HOST_MODES:
        if innet and other in at:
            out[f"{other}_over_in_network_time"] = at[other]["median_seconds"] / innet["median_seconds"]
    if innet and int8:
        out["int8_over_int32_time"] = int8["median_seconds"] / innet["median_seconds"]
        if innet["bytes_per_host_link"] > 0:
            out["int8_over_int32_host_link_bytes"] = int8["bytes_per_host_link"] / innet["bytes_per_host_link"]
    return {k: v for k, v in out.items() if math.isfinite(v)}
