"""The link-rate sweep (issue 18): 8 workers, 4 MB, on `leafspine,2,1,4` with every link shaped to `--bw` rates;
the host ring, gloo and in-network int32/int8 side by side in one run per rate, on the same links and MTU.

Each mode gets its bandwidth bound, the time its own bytes need on a host link at the link rate: the bytes the
mode moved on a host link per all-reduce (both directions, measured by the link counters) over two directions of
the link rate (links are full duplex and every mode here loads both directions alike: in-network sends the tensor
up and receives the sum down, the ring sends and receives 2(N-1)/N of it). A mode's efficiency is bound / measured
time; the sweep reports the highest rate at which in-network int32 still reaches `EFFICIENCY` of its bound (above
it the switches' CPU, not the link, sets the pace on this emulation).

    python -m bench.fabric_runs.rates OUT_DIR [--quick]      # by hand (root), JSON on stdout
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from p4fabric.report import RunReport

from bench.fabric_runs.sweep import BENCH_OPTIONS, INNET_MODE, mode_row, run_point

WORKERS, ELEMENTS = 8, 1 << 20  # 8 workers, 4 MB of float32
QUICK_RATES = (25.0,)  # Mbit/s: the rate (each rate is a 4 MB run of four modes: minutes here)
FULL_RATES = (5.0, 10.0, 25.0, 50.0, 100.0)
EFFICIENCY = 0.8
MODES = ("ring", "gloo", "innet")
FMTS = ("int32", "int8")


def bound_seconds(bytes_per_host_link: float, bw_mbps: float) -> float:
    """Seconds a host link at `bw_mbps` (each direction) needs for these bytes (both directions together)."""
    return bytes_per_host_link * 8 / (2 * bw_mbps * 1e6)


def resent_fraction(report: RunReport, mode: str) -> float | None:
    """Resent packets over packets sent by a mode's workers (None for ring and gloo: TCP's are not counted)."""
    sent = sum(r.stats.get("packets_sent", 0) for r in report.worker_results if r.mode == mode)
    resent = sum(r.stats.get("retransmissions", 0) for r in report.worker_results if r.mode == mode)
    return resent / sent if sent else None


def rate_rows(report: RunReport, bw: float | None) -> list[dict[str, Any]]:
    """One row per measured mode of a run on links shaped to `bw` Mbit/s (None: unshaped, no bound)."""
    rows = []
    for summary in report.modes:
        row = mode_row(report, summary, WORKERS)
        row["bw_mbps"] = bw
        row["resent_fraction"] = resent_fraction(report, summary.mode)
        for key in ("fast_retransmissions", "timer_retransmissions"):
            row[key] = int(sum(r.stats.get(key, 0) for r in report.worker_results if r.mode == summary.mode))
        if bw is not None and summary.median_seconds > 0:
            row["bound_seconds"] = bound_seconds(row["bytes_per_host_link"], bw)
            row["efficiency"] = row["bound_seconds"] / summary.median_seconds
        rows.append(row)
    return rows


def speedups(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """How many times faster in-network int32 (and int8) is than the ring and gloo, at one rate."""
    at = {r["mode"]: r["median_seconds"] for r in rows if r.get("median_seconds", 0) > 0 and r.get("correct")}
    out: dict[str, float] = {}
    for fmt in FMTS:
        innet = at.get(INNET_MODE[fmt])
        for host in ("ring", "gloo"):
            if innet and host in at:
                out[f"{host}_over_{fmt}"] = round(at[host] / innet, 3)
    return out


def highest_rate(rows: Sequence[dict[str, Any]], mode: str = INNET_MODE["int32"]) -> float | None:
    """The highest shaped rate at which `mode` ran correctly at >= `EFFICIENCY` of its bandwidth bound."""
    ok = [r["bw_mbps"] for r in rows if r["mode"] == mode and r.get("correct") and r.get("bw_mbps") is not None
          and r.get("efficiency", 0) >= EFFICIENCY]
    return max(ok, default=None)


def rate_sweep(base: Path, rates: Sequence[float], count: int, options: Mapping[str, Any],
               modes: Sequence[str] = MODES) -> dict[str, Any]:
    """Every rate, all modes side by side in one run per rate; rows, speedups per rate and the 80% rate."""
    rows: list[dict[str, Any]] = []
    per_rate: dict[str, dict[str, float]] = {}
    errors: list[str] = []
    for bw in rates:
        report = run_point(base / f"rate-{bw:g}", WORKERS, ELEMENTS, count, modes=modes, fmts=FMTS,
                           options={**options, "bw": bw})
        at = rate_rows(report, bw)
        rows += at
        per_rate[f"{bw:g}"] = speedups(at)
        errors += [f"{bw:g} Mbit/s: {e}" for e in report.errors]
    return {"workers": WORKERS, "elements": ELEMENTS, "rates_mbps": list(rates), "rows": rows,
            "speedups": per_rate, "errors": errors, "efficiency_threshold": EFFICIENCY,
            "innet_int32_highest_rate_at_80pct": highest_rate(rows),
            "innet_int8_highest_rate_at_80pct": highest_rate(rows, INNET_MODE["int8"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rate", type=float, action="append", help="Mbit/s (repeatable; default the plan's)")
    parser.add_argument("--count", type=int, default=2)
    parser.add_argument("--mode", action="append", choices=MODES)
    parser.add_argument("--values", type=int, help="values per packet (default: p4ina run's for the target)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("needs root", file=sys.stderr)
        return 1
    rates = tuple(args.rate or (QUICK_RATES if args.quick else FULL_RATES))
    options = {**BENCH_OPTIONS, "values": args.values} if args.values else BENCH_OPTIONS
    result = rate_sweep(args.out, rates, args.count, options, modes=tuple(args.mode or MODES))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
