"""`p4ina model`: all-reduce time at 1k..100k GPUs from the analytical fabric model (bench/scale/model.py), optionally
calibrated from emulated measurements, as JSON, a PNG plot and a console table."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from bench.scale.model import (
    ALGORITHMS,
    TOPOLOGIES,
    Measurement,
    Params,
    calibrate,
    calibrated_parameters,
    sweep,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("model", help="model all-reduce time at scale (1k..100k GPUs), optionally calibrated")
    p.add_argument("--topology", action="append", choices=TOPOLOGIES, help="repeatable; default: all")
    p.add_argument("--algorithm", action="append", choices=ALGORITHMS, help="repeatable; default: all")
    p.add_argument("--hosts", default="1024,4096,16384,65536,100000", help="comma-separated GPU counts")
    p.add_argument("--sizes", default="65536,4194304,67108864", help="comma-separated message sizes in bytes")
    for f in fields(Params):
        if f.type in ("float", "int", "float | None"):
            p.add_argument(f"--{f.name.replace('_', '-')}", type=float, default=None, help=f"default {f.default}")
    p.add_argument("--calibrate", type=Path, metavar="MEASUREMENTS.json",
                   help="fit the model to measured runs first: host overhead, switch latency and aggregation rate; "
                        "with --cores (a software fabric), CPU per switch and host packet and the scheduling wait. "
                        "reads the fabric benchmark.s fabric.json from `p4ina bench`, or a list of points")
    p.add_argument("--out", type=Path, default=None, help="folder for model.json and model.png")
    p.add_argument("--json", action="store_true", help="print the JSON result on stdout")
    p.set_defaults(handler=run)


def _params(args: argparse.Namespace, base: Params | None = None) -> Params:
    """`base` (default: `Params()`) with every parameter given on the command line."""
    overrides: dict[str, Any] = {}
    for f in fields(Params):
        value = getattr(args, f.name, None)
        if value is not None:
            overrides[f.name] = int(value) if f.type == "int" else value
    return replace(base or Params(), **overrides)


def base_params(path: Path) -> Params | None:
    """The parameters a fabric benchmark ran its fit from (its emulation's cores, payload, window), if it says."""
    try:
        raw = json.loads(path.read_text())
        base = raw["calibration"]["base_params"]
        known = {f.name for f in fields(Params)}
        return Params(**{k: v for k, v in base.items() if k in known})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load_measurements(path: Path) -> list[Measurement]:
    """Measured points: the fabric benchmark's JSON (its `calibration.points`: algorithm, workers, bytes,
    measured_s on `leafspine,2,1,workers/2`), or a JSON list of {algorithm, topology, hosts, message_bytes, seconds,
    hosts_per_leaf?}."""
    try:
        raw = json.loads(path.read_text())
        if isinstance(raw, dict) and isinstance(raw.get("calibration"), dict):
            return [Measurement(str(r["algorithm"]), "leafspine", int(r["workers"]), float(r["bytes"]),
                                float(r["measured_s"]), hosts_per_leaf=max(1, int(r["workers"]) // 2))
                    for r in raw["calibration"]["points"]]
        if not isinstance(raw, list):
            raise ValueError("expected a list of points or a fabric benchmark result with a 'calibration' section")
        return [Measurement(str(r["algorithm"]), str(r["topology"]), int(r["hosts"]), float(r["message_bytes"]),
                            float(r["seconds"]), hosts_per_leaf=int(r["hosts_per_leaf"]) if r.get("hosts_per_leaf")
                            else None) for r in raw]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"p4ina model: cannot read measurements from {path}: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    try:
        params = _params(args, base_params(args.calibrate) if args.calibrate is not None else None)
        hosts = [int(h) for h in args.hosts.split(",")]
        sizes = [float(s) for s in args.sizes.split(",")]
    except ValueError as exc:
        print(f"p4ina model: {exc}", file=sys.stderr)
        return 2
    result: dict[str, Any] = {}
    if args.calibrate is not None:
        cal = calibrate(load_measurements(args.calibrate), params, free=calibrated_parameters(params))
        params = cal.params
        result["calibration"] = {"fitted": cal.fitted, "mean_abs_rel_error": cal.mean_abs_rel_error,
                                 "points": cal.points}
    topologies = args.topology or list(TOPOLOGIES)
    algorithms = args.algorithm or list(ALGORITHMS)
    try:
        rows = sweep(algorithms, topologies, hosts, sizes, params)
    except ValueError as exc:
        print(f"p4ina model: {exc}", file=sys.stderr)
        return 2
    result["params"] = asdict(params)
    result["rows"] = rows
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "model.json").write_text(json.dumps(result, indent=2))
        _plot(rows, args.out / "model.png")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _table(rows, result.get("calibration"))
        if args.out is not None:
            print(f"wrote {args.out / 'model.json'} and {args.out / 'model.png'}")
    return 0


def _table(rows: list[dict[str, Any]], calibration: dict[str, Any] | None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="modelled all-reduce time (ms)")
    for col in ("topology", "hosts", "bytes", "algorithm", "ms", "algbw Gb/s"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["topology"]), str(r["hosts"]), f"{r['bytes']:.0f}", str(r["algorithm"]),
                      f"{r['seconds'] * 1e3:.3f}", f"{r['algbw_gbps']:.2f}")
    console = Console()
    console.print(table)
    if calibration is not None:
        console.print(f"calibration: mean |relative error| {calibration['mean_abs_rel_error']:.1%}, "
                      f"fitted {calibration['fitted']}")


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    largest = max(float(r["bytes"]) for r in rows)
    topologies = sorted({str(r["topology"]) for r in rows})
    fig, axes = plt.subplots(1, len(topologies), figsize=(4.5 * len(topologies), 3.6), squeeze=False)
    for ax, topology in zip(axes[0], topologies, strict=True):
        for algorithm in sorted({str(r["algorithm"]) for r in rows}):
            pts = [(r["hosts"], r["seconds"] * 1e3) for r in rows
                   if r["topology"] == topology and r["algorithm"] == algorithm and r["bytes"] == largest]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=algorithm)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{topology}, {largest / 2**20:.0f} MiB")
        ax.set_xlabel("GPUs")
        ax.set_ylabel("all-reduce time (ms)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
