"""`p4ina run --kill-worker` end to end on Mininet (root): a worker killed mid-run is replaced by a hot-standby host
and every step's result stays exact (docs/run.md, "A worker killed mid-run")."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_fabric_runs import _mode, p4ina_run

pytestmark = [pytest.mark.root, pytest.mark.integration, pytest.mark.slow]


def test_worker_killed_mid_job_is_replaced_by_a_spare(tmp_path: Path) -> None:
    """`--kill-worker`: h2's process is killed mid-run; the runner sees it exit, the controller moves rank 0 to the
    spare h1 on h2's leaf (h1 takes h2's child index), h1 finishes the interrupted step from leaf1's cells and the
    rest of the run; every step of every rank is exact, and the report times the replacement."""
    # 256 values per packet (not the default 2048): 1024 chunks per step, so h2 dies mid-run, mid-step
    report = p4ina_run(tmp_path, "--topo", "leafspine,2,2,2", "--workers", "3", "--spare", "h1",
                       "--kill-worker", "h2@5", "--size", "262144", "--count", "8", "--values", "256", timeout=1500)
    fired = report["faults"]["fired"]
    assert [f["kind"] for f in fired] == ["kill-worker"] and fired[0]["ok"], fired
    (rep,) = report["faults"]["replacements"]
    assert (rep["dead"], rep["spare"], rep["rank"], rep["same_switch"]) == ("h2", "h1", 0, True)
    assert rep["spare_error"] == "" and rep["spare_resumed"] is not None
    assert rep["steps_after"] > 0 and rep["all_exact_after"] is True
    assert rep["first_exact_ms"] is not None and rep["first_exact_ms"] > rep["spare_started_ms"] > 0
    assert report["exact"] is True, report["errors"] or report["_stderr"][-2000:]
    assert report["_returncode"] == 0
    results = {r["rank"]: r for r in report["worker_results"]}
    assert results[0]["host"] == "h1" and all(r["exact"] for r in results.values())
    assert _mode(report, "in-network")["steps"] == 8
