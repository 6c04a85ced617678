"""Recovery after a downed link (issue 12): on the emulated leaf-spine, take down a leaf-spine link that the job's
reduction tree uses while the in-network all-reduce runs, and report how long the controller took to move the job
onto a new tree (its `job_rebuilt` event) and what the step times did around it. The sums must stay exact.

P4Runtime has no port-status notification, so the runner declares the link down to the controller as it cuts it
(`ctl link down`); the recovery time is therefore rebuild time from that declaration, with no detection delay in
it (a killed spine, measured by `bench.fabric`, includes detection).

    python -m bench.fabric_runs.recovery OUT_DIR [--quick]      # one run by hand (root), JSON on stdout
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from p4fabric.faults import build_plan
from p4fabric.report import RunReport
from p4fabric.runner import Runner, RunOptions
from p4fabric.topofile import controller_topology
from p4fabric.topos import parse_topo_spec

from bench.fabric_runs.sweep import BENCH_OPTIONS

TOPO = "leafspine,2,2,2"
#: Floats per all-reduce: large enough that a step lasts about a second on the embedded target, so the fault
#: lands inside a step rather than between runs.
SIZE = 65536
#: Seconds after the workers start (the fault injector's clock) at which the link goes down: after the first
#: step (worker start-up is about a second here, a step about two), so that step is an undisturbed baseline.
FAULT_AT = 3.0


def tree_link(topo_spec: str = TOPO) -> tuple[str, str]:
    """A (leaf, parent) link of the tree the controller will build for all hosts of `topo_spec`, chosen with the
    controller's own tree code on the same topology, so the fault is known to hit the job before the run."""
    from controller.trees import compute_tree

    topo = parse_topo_spec(topo_spec)
    switches = sorted(topo.switches())
    # Addresses only have to be distinct for the model to validate; nothing connects to them.
    model = controller_topology(topo, {s: f"127.0.0.1:{50000 + i}" for i, s in enumerate(switches)})
    hosts = sorted(topo.hosts(), key=lambda h: int(h[1:]) if h[1:].isdigit() else h)
    tree = compute_tree(model, hosts)
    leaf = tree.member_switch[hosts[0]]
    parent = tree.parent.get(leaf)
    if parent is None:
        raise RuntimeError(f"{topo_spec}: the job's tree is a single switch ({leaf}); no tree link to take down")
    return leaf, parent


def _tree_links(tree: dict[str, Any]) -> set[frozenset[str]]:
    parents = tree.get("parent") or {}
    return {frozenset((child, parent)) for child, parent in parents.items() if parent is not None}


def link_down_recovery(base: Path, quick: bool, *, log: Callable[[str], None] | None = None,
                       options: Mapping[str, Any] = BENCH_OPTIONS) -> dict[str, Any]:
    """One `p4ina run` on leafspine,2,2,2 with a tree link downed mid-run; the run's files stay under `base`."""
    if os.geteuid() != 0:
        raise RuntimeError("the link-down recovery benchmark needs root (network namespaces, veth pairs)")
    count = 4 if quick else 6
    leaf, parent = tree_link(TOPO)
    spec = f"{leaf}-{parent}@{FAULT_AT:g}"
    run = RunOptions(topo=TOPO, out=base / "link-down", size=SIZE, count=count, **options,
                     faults=build_plan(link_down=[spec]))
    report = Runner(run, log=log or (lambda _text: None)).run()
    return summarise_recovery(report, (leaf, parent))


def summarise_recovery(report: RunReport, link: tuple[str, str]) -> dict[str, Any]:
    """The benchmark's numbers from a finished run's report (separate from the run so it can be checked alone)."""
    events = report.faults.get("controller_events", [])
    name = "-".join(sorted(link))
    relevant = [e for e in events if e.get("kind") in ("link_down", "job_rebuilt", "job_degraded")
                and name in str(e.get("detail", ""))]
    rebuilt = [e for e in relevant if e.get("kind") == "job_rebuilt"]
    tree = report.job.get("tree") or {}
    innet = report.mode("in-network")
    steps = list(innet.step_seconds) if innet is not None else []
    data: dict[str, Any] = {
        "topology": TOPO, "size": report.size, "count": report.count, "workers": len(report.workers),
        "fault": f"link {link[0]}-{link[1]} down at {FAULT_AT:g} s", "link": list(link),
        "link_in_tree": frozenset(link) in _tree_links(tree),
        "root_before": tree.get("root"),
        "root_after": rebuilt[-1].get("data", {}).get("root") if rebuilt else None,
        "recovery_ms": [e.get("data", {}).get("recovery_ms") for e in rebuilt],
        "degraded": any(e.get("kind") == "job_degraded" for e in relevant),
        "controller_events": relevant,
        "fired": report.faults.get("fired", []),
        "step_seconds": steps,
        "exact": report.exact,
        "errors": list(report.errors),
    }
    if not rebuilt and not data["fired"]:
        data["note"] = "the run ended before the fault time: no recovery was measured"
    if innet is not None:
        data.update(median_seconds=innet.median_seconds, goodput_gbps=innet.goodput_gbps,
                    retransmissions=innet.retransmissions, checksum_failures=innet.checksum_failures)
    if len(steps) >= 2:
        slowest = max(steps)
        rest = list(steps)
        rest.remove(slowest)
        # what the fault cost the step it hit: the slowest step against the typical undisturbed one
        data["slowest_step_s"] = slowest
        data["other_steps_median_s"] = statistics.median(rest)
        data["disruption_s"] = round(slowest - statistics.median(rest), 6)
    data["link_bytes"] = {k: v.get("in-network", 0) for k, v in report.link_bytes.items()}
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fabric_runs.recovery", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the run's files")
    parser.add_argument("--quick", action="store_true", help="4 steps instead of 6")
    args = parser.parse_args(argv)
    try:
        data = link_down_recovery(args.out, args.quick, log=lambda text: print(text, file=sys.stderr, flush=True))
    except Exception as exc:  # one line for the operator; the run's own files hold the details
        print(f"recovery_bench: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    print(json.dumps(data, indent=2, sort_keys=True, default=str))
    return 0 if data["exact"] and data["link_in_tree"] else 1


if __name__ == "__main__":
    sys.exit(main())
