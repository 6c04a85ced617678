"""`p4ina bench [--quick] --out DIR`: run the benchmark modules, write one JSON file each, PNG figures
(`bench.plots`) and a summary, and print a table. A benchmark module exposes `run(quick: bool) -> dict`
(JSON-serialisable), a one-line docstring, and optionally `unavailable() -> str | None` (why it cannot run on this
machine)."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: Modules of the `bench` package that are not benchmarks: helpers, and tools run by hand with their own arguments
#: (cluster_cost needs an ssh server; p4c_errors a p4c testdata checkout, and p4c_samples reports it too).
NOT_BENCHMARKS = frozenset({"cli", "common", "plots", "util", "utils", "cluster_cost", "p4c_errors"})
#: Benchmarks that run first (cheap, and the others' numbers are read against them); the rest follow by name.
FIRST = ("switch_pps",)


#: Benchmarks that run last (the emulated fabric's: the longest, and what the README's headline comes from).
LAST = ("fabric",)
#: Benchmarks from outside the `bench` package (none today; they run after the package's own).
EXTRA_MODULES: tuple[str, ...] = ()


def discover(package: str = "bench", extra: tuple[str, ...] = EXTRA_MODULES) -> list[str]:
    """Every module of `package` that defines `run(quick)`, then `extra`: a new benchmark in bench/ needs no
    registration here."""
    pkg = importlib.import_module(package)
    names = sorted(info.name for info in pkgutil.iter_modules(pkg.__path__)
                   if not info.ispkg and not info.name.startswith("_") and info.name not in NOT_BENCHMARKS)
    ordered = ([n for n in FIRST if n in names] + [n for n in names if n not in FIRST and n not in LAST]
               + [n for n in LAST if n in names])
    return [f"{package}.{n}" for n in ordered] + list(extra)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="run the benchmarks, write JSON results and print a table",
                                   description=__doc__)
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="folder for the JSON results and plots")
    parser.add_argument("--quick", action="store_true", help="short runs (CI, smoke tests)")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only this benchmark (module name without 'bench.'); repeatable")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    available = discover()
    names = select_modules(available, args.only)
    if not names:
        known = ", ".join(m.rsplit(".", 1)[-1] for m in available) or "none in this checkout"
        print(f"p4ina bench: no benchmark to run (asked: {', '.join(args.only or ['all'])}; known: {known})",
              file=sys.stderr)
        return 2
    summary = run_benchmarks(names, out_dir=args.out, quick=args.quick)
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        print_table(summary)
    return 1 if any(r["status"] == "failed" for r in summary["benchmarks"]) else 0


def select_modules(modules: Sequence[str], only: Iterable[str] | None) -> list[str]:
    if not only:
        return list(modules)
    wanted = {o.rsplit(".", 1)[-1] for o in only}
    return [m for m in modules if m.rsplit(".", 1)[-1] in wanted]


def run_benchmarks(modules: Sequence[str], *, out_dir: Path, quick: bool) -> dict[str, Any]:
    """Run each module's `run(quick)`; write `<name>.json` per benchmark and `summary.json`; return the summary.
    A module that cannot be imported, or whose `unavailable()` gives a reason, is listed as unavailable; one that
    raises is listed as failed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for module_name in modules:
        name = module_name.rsplit(".", 1)[-1]
        entry: dict[str, Any] = {"name": name, "module": module_name}
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # e.g. an optional dependency of that benchmark is missing
            results.append({**entry, "status": "unavailable", "detail": f"cannot import: {exc}"})
            continue
        if not callable(getattr(module, "run", None)):
            results.append({**entry, "status": "unavailable", "detail": "no run(quick) function"})
            continue
        check = getattr(module, "unavailable", None)
        reason = check() if callable(check) else None
        if reason:  # e.g. a fabric benchmark without root
            results.append({**entry, "status": "unavailable", "detail": str(reason)})
            continue
        started = time.perf_counter()
        try:
            data = module.run(quick)
        except Exception as exc:  # a failing benchmark is reported, the others still run
            (out_dir / f"{name}.error.txt").write_text(traceback.format_exc())
            results.append({**entry, "status": "failed", "detail": f"{type(exc).__name__}: {exc}".splitlines()[0],
                            "seconds": round(time.perf_counter() - started, 3)})
            continue
        if not isinstance(data, dict):
            results.append({**entry, "status": "failed", "detail": f"run() returned {type(data).__name__}, not dict"})
            continue
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
        seconds = round(time.perf_counter() - started, 3)
        results.append({**entry, "status": "ok", "file": str(path), "seconds": seconds, "headline": headline(data),
                        "description": _first_line(module.__doc__), "plots": _plots(out_dir, name, data)})
    summary = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "processor": platform.processor() or platform.machine()},
        "benchmarks": results,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    return summary


def _plots(out_dir: Path, name: str, data: dict[str, Any]) -> list[str]:
    """PNG figures of one benchmark, drawn once its JSON is safely written (`bench.plots` skips, never raises)."""
    try:
        from bench.plots import plot_all
    except ImportError as exc:  # matplotlib missing: the JSON results stand on their own
        print(f"p4ina bench: no plots ({exc})", file=sys.stderr)
        return []
    return [str(p) for p in plot_all(out_dir, {name: data})]


def headline(data: dict[str, Any], limit: int = 6) -> dict[str, Any]:
    """The numbers worth a table cell: a module's `summary` dict if it has one, else its top-level scalars."""
    source = data.get("summary") if isinstance(data.get("summary"), dict) else data
    assert isinstance(source, dict)
    out: dict[str, Any] = {}
    for key, value in source.items():
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            continue
        out[str(key)] = round(value, 3) if isinstance(value, float) else value
        if len(out) == limit:
            break
    return out


def print_table(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="p4ina bench" + (" (quick)" if summary["quick"] else ""))
    table.add_column("benchmark")
    table.add_column("status")
    table.add_column("seconds", justify="right")
    table.add_column("results")
    for result in summary["benchmarks"]:
        if result["status"] == "ok":
            text = ", ".join(f"{k}={v}" for k, v in result["headline"].items())
        else:
            text = result.get("detail", "")
        style = {"ok": "green", "failed": "red"}.get(result["status"], "yellow")
        table.add_row(result["name"], f"[{style}]{result['status']}[/{style}]", str(result.get("seconds", "")), text)
    console = Console()
    console.print(table)


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""
