"""Re-patching vs rerouting (issue 20, part 2): on the OCS leaf-spine (`ocs-leafspine,L,S,H,SPARES`), kill the
spine the job's tree uses and recover twice in one run on the same fabric: first by moving its circuits to a hot
spare that takes its name, then (a fresh job, the watcher on) by rebuilding the tree over the surviving spines
(`p4fabric.ocsrun`). Prints one JSON object: per recovery, the recovery time, the first exact result after the kill,
the mean all-reduce step after recovery, where the kill landed and whether every step was exact.

    python -m bench.fabric_runs.ocs_recovery OUT_DIR [--topo ...] [--size N] [--count N] [--kill spine1@T]   # root
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from p4fabric.faults import build_plan
from p4fabric.ocsrun import RECOVERIES, OcsRecoveryRunner
from p4fabric.runner import RunOptions

KEYS = ("recovery_ms", "repatched_ms", "first_exact_ms", "step_s_after_recovery", "steps_after_recovery",
        "steps_done_at_kill", "all_exact_after", "device", "spare")


def compare(out: Path, *, topo: str, size: int, count: int, kill: str, values: int | None) -> dict[str, Any]:
    """One run with both recoveries; the summary rows side by side."""
    opts = RunOptions(topo=topo, out=out, size=size, count=count, values=values, show_progress=False, plots=False,
                      faults=build_plan(kill_switch=[kill]))
    report = OcsRecoveryRunner(opts).run().to_dict()
    recoveries = report["faults"].get("recoveries", {})
    rows = {name: {k: recoveries.get(name, {}).get(k) for k in KEYS} for name in RECOVERIES}
    for mode in report["modes"]:
        for name in RECOVERIES:
            if mode["mode"].endswith(f"({name})"):
                rows[name].update(median_step_s=mode["median_seconds"], exact=mode["exact"],
                                  retransmissions=mode["retransmissions"])
    if "re-patch" in recoveries:
        rows["re-patch"]["ocs_dark_s"] = recoveries["re-patch"].get("ocs", {}).get("dark_s")
    return {"topology": topo, "size": size, "count": count, "kill": kill, "exact": report["exact"],
            "ocs_reconfig_ms": report["faults"].get("ocs", {}).get("reconfig_ms"), "recoveries": rows,
            "errors": report["errors"], "report": str(out / "report.json")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--topo", default="ocs-leafspine,2,2,2,1")
    parser.add_argument("--size", type=int, default=65536, help="float32 elements per all-reduce")
    parser.add_argument("--count", type=int, default=5, help="steps per recovery pass")
    parser.add_argument("--kill", default="spine1@10", metavar="SPINE@T", help="seconds after the workers start")
    parser.add_argument("--values", type=int, default=64, help="values per packet (-D AGG_VALUES)")
    args = parser.parse_args(argv)
    result = compare(args.out, topo=args.topo, size=args.size, count=args.count, kill=args.kill, values=args.values)
    print(json.dumps(result, indent=1, sort_keys=True))
    return 0 if result["exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
