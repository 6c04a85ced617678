"""The OCS fabric end to end (root, Mininet, embedded target): a spine killed mid-job is recovered by re-patching its
circuits to a spare spine that takes its name; every step's result is exact and nothing is left behind."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration, pytest.mark.slow]

for _module in ("controller.jobs", "hostagent.worker", "p4switch.compiler", "mininet.net"):
    importlib.import_module(_module)  # a missing layer is an error, never a skip (docs/testing.md)


def test_spine_killed_on_ocs_fabric_is_repatched_to_the_spare_exactly(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from p4fabric.faults import build_plan
    from p4fabric.ocsrun import OcsRecoveryRunner
    from p4fabric.runner import RunOptions

    monkeypatch.setenv("P4INA_STATE_DIR", str(tmp_path / "state"))
    before = set(os.listdir("/sys/class/net"))
    opts = RunOptions(topo="ocs-leafspine,2,2,1,1,ocs_ms=30", out=tmp_path / "out", size=32768, count=20, values=64,
                      faults=build_plan(kill_switch=["spine1@2"]), show_progress=False, plots=False)
    runner = OcsRecoveryRunner(opts, recoveries=("re-patch",), log=lambda _text: None)
    report = runner.run().to_dict()
    assert report["exact"] is True, report["errors"]
    (mode,) = report["modes"]
    assert mode["mode"] == "in-network (re-patch)" and mode["steps"] == 20 and mode["workers_failed"] == 0
    record = report["faults"]["recoveries"]["re-patch"]
    assert len(record["fired"]) == 1 and record["fired"][0]["ok"], record  # the kill landed before the job ended
    assert record["spine"] == "spine1" and record["device"] == "spine1" and record["spare"] == "spare1"
    # OCS ports with 2 leaves and 2 spines: leaf1's uplinks 1, 2, leaf2's 3, 4; spine1's ports 5, 6; spine2's 7, 8;
    # spare1's 9, 10. spine1's circuits (1-5, 3-6) move to the spare (1-9, 3-10); spine2's stay
    assert record["ocs"]["removed"] == [[1, 5], [3, 6]] and record["ocs"]["added"] == [[1, 9], [3, 10]]
    assert record["ocs"]["dark_s"] >= 0.03  # the changed circuits were dark for the reconfiguration time at least
    assert record["steps_after"] > 0 and record["all_exact_after"] is True  # the job ran on after the kill, exactly
    assert report["faults"]["ocs"]["serving"] == {"spine1": "spare1", "spine2": "spine2"}
    # the controller's topology now reaches spine1 at the spare's P4Runtime address; the leaves were not touched
    topology = (tmp_path / "out" / "topology.yaml").read_text()
    assert "spare1" not in topology and "ocs1" not in topology
    # the OCS's bridges and ports and the spare's ports are gone (other runs on this machine may add their own)
    left = {n for n in set(os.listdir("/sys/class/net")) - before if "ocs1" in n or "spare1" in n}
    assert not left, f"interfaces left behind: {sorted(left)}"
