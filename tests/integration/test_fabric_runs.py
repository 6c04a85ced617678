"""`p4ina run` end to end on Mininet: embedded switches, the controller library, host agents in the hosts.

Each scenario runs the real command in a subprocess with `--json` and checks the report's `exact` (every worker's
result equals the local reference) and what it says about faults; then that nothing of the run is left."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration, pytest.mark.slow]

for _module in ("controller.jobs", "hostagent.worker", "p4switch.compiler", "p4switch.switch_cli"):
    importlib.import_module(_module)  # a missing layer is an error, never a skip (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]


def run_stopping_cleanly(argv: list[str], *, timeout: float, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(argv)`, except that a run interrupted (its timeout, pytest-timeout, Ctrl-C) gets SIGTERM
    first: `p4ina run` removes its fabric on SIGTERM, while subprocess.run's SIGKILL left the switches, host
    shells and veths of a timed-out run burning CPU under the tests that followed."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        proc.terminate()
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def p4ina_run(tmp_path: Path, *args: str, timeout: float = 600) -> dict[str, Any]:
    out = tmp_path / "out"
    env = dict(os.environ, P4INA_STATE_DIR=str(tmp_path / "state"))
    result = run_stopping_cleanly([sys.executable, "-m", "p4ina", "run", "--out", str(out), "--json", *args],
                                  timeout=timeout, env=env)
    assert result.stdout.strip(), f"no report; stderr:\n{result.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(result.stdout)
    assert (out / "report.json").exists() and (out / "topology.yaml").exists()
    state = tmp_path / "state"
    assert not state.exists() or not any(state.iterdir()), "the run left state behind"
    for switch in report["job"]["tree"]["parent"]:
        assert not Path(f"/sys/class/net/{switch}-eth1").exists(), f"{switch}-eth1 left behind"
    report["_returncode"] = result.returncode
    report["_stderr"] = result.stderr
    return report


def _mode(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in report["modes"] if m["mode"] == name)


def test_leaf_spine_four_workers_exact_in_network_and_ring(tmp_path: Path) -> None:
    report = p4ina_run(tmp_path, "--topo", "leafspine,2,2,2", "--size", "8192", "--count", "2",
                       "--mode", "ring", "--mode", "innet")
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    assert report["_returncode"] == 0
    assert len(report["workers"]) == 4 and report["job"]["tree"]["root"] in ("spine1", "spine2")
    innet, ring = _mode(report, "in-network"), _mode(report, "ring")
    assert innet["steps"] == ring["steps"] == 2 and innet["checksum_failures"] == 0
    # in-network traffic crosses only the tree's links; the ring's crosses the fabric
    root = report["job"]["tree"]["root"]
    idle_spine = "spine2" if root == "spine1" else "spine1"
    assert report["link_bytes"][f"leaf1-{idle_spine}"]["in-network"] < 2000  # nothing but stray control frames
    assert report["link_bytes"][f"leaf1-{root}"]["in-network"] > 8192 * 4
    assert (tmp_path / "out" / "steps.png").exists() and (tmp_path / "out" / "links.png").exists()


@pytest.mark.timeout(960)  # the run's own 900 s, not pytest's 300 s default: 20 switches and 16 hosts
def test_fat_tree_k4_sixteen_workers(tmp_path: Path) -> None:
    report = p4ina_run(tmp_path, "--topo", "fattree,4", "--size", "2048", "--count", "1", timeout=900)
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    assert len(report["workers"]) == 16
    tree = report["job"]["tree"]
    assert tree["root"].startswith("core") or tree["root"].startswith("agg")
    assert len(tree["parent"]) >= 8 + 1  # every edge switch, their aggregation switches, a root


def test_two_percent_loss_stays_exact(tmp_path: Path) -> None:
    report = p4ina_run(tmp_path, "--topo", "leafspine,2,2,2", "--size", "16384", "--count", "2", "--loss", "2")
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    assert report["faults"]["plan"]["loss_percent"] == 2.0
    assert _mode(report, "in-network")["retransmissions"] > 0  # losses happened and were repaired


def test_spine_killed_mid_job_completes_after_rebuild(tmp_path: Path) -> None:
    # 256 values per packet (not the default 2048): 256 chunks per step, so the steps still run when spine1 dies
    report = p4ina_run(tmp_path, "--topo", "leafspine,2,2,2", "--size", "65536", "--count", "3",
                       "--kill-switch", "spine1@2", "--values", "256")
    fired = report["faults"]["fired"]
    assert [f["kind"] for f in fired] == ["kill-switch"] and fired[0]["ok"], fired
    # nobody told the controller: its watcher saw the P4Runtime stream break and rebuilt the tree
    assert "switch spine1 lost" in fired[0]["outcome"] and "rebuilt, root spine2" in fired[0]["outcome"]
    kinds = [e["kind"] for e in report["faults"]["controller_events"]]
    assert "switch_lost" in kinds and "job_rebuilt" in kinds
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    assert _mode(report, "in-network")["steps"] == 3


def test_spraying_puts_ring_traffic_on_both_spines(tmp_path: Path) -> None:
    """`--uplinks spray` end to end: the controller installs route_spray (per packet, a random spine; its P4 behaviour
    is tested in tests/target/test_aggregation_forwarding.py, the entries in test_controller_cli.py), both spines
    carry ring traffic, and TCP's reordering of sprayed segments leaves the all-reduce exact. (Link counters here
    add both directions, so they cannot tell one sprayed flow from two flows pinned to different spines.)"""
    report = p4ina_run(tmp_path, "--topo", "leafspine,2,2,1", "--size", "262144", "--count", "2",
                       "--mode", "ring", "--uplinks", "spray")
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    log = (tmp_path / "out" / "controller" / "commands.log").read_text()
    assert "--uplinks spray" in log
    # two workers (h1 on leaf1, h2 on leaf2): the ring is two TCP flows, h1->h2 and h2->h1
    per_spine = {s: report["link_bytes"][f"leaf1-{s}"]["ring"] for s in ("spine1", "spine2")}
    total = sum(per_spine.values())
    assert total > 2 * 262144, per_spine
    assert all(b > 0.25 * total for b in per_spine.values()), per_spine
