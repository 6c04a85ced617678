"""One `p4ina run` that measures every baseline and two in-network formats on the same fabric: host ring, gloo,
in-network int32 and int8 (each format its own job on the same root). int32, ring and gloo must be bit-exact; int8
loses bits by design and must stay within hostagent.quantize's bound while moving fewer bytes on the host links."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration]

for _module in ("controller.jobs", "hostagent.worker", "p4switch.compiler", "torch.distributed"):
    importlib.import_module(_module)  # a missing layer is an error, never a skip (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]


def test_ring_gloo_int32_int8_in_one_run(tmp_path: Path) -> None:
    out, state = tmp_path / "out", tmp_path / "state"
    argv = [sys.executable, "-m", "p4ina", "run", "--topo", "leafspine,2,1,2", "--workers", "4", "--size", "8192",
            "--count", "1", "--out", str(out), "--json", "--mode", "ring", "--mode", "gloo", "--mode", "innet",
            "--fmt", "int32", "--fmt", "int8", "--step-timeout", "120"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=REPO, check=False,
                            env=dict(os.environ, P4INA_STATE_DIR=str(state)))
    assert result.stdout.strip(), f"no report; stderr:\n{result.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(result.stdout)
    assert report["exact"] is True and report["correct"] is True, report["errors"] or result.stderr[-2000:]
    assert result.returncode == 0 and report["bit_exact"] is False  # int8 is not bit-exact, and says so

    modes = {m["mode"]: m for m in report["modes"]}
    assert list(modes) == ["ring", "gloo", "in-network", "in-network int8"]
    for name in ("ring", "gloo", "in-network"):
        assert modes[name]["exact"] and modes[name]["steps"] == 1 and modes[name]["max_abs_error"] == 0.0, name
    int8 = modes["in-network int8"]
    assert int8["fmt"] == "int8" and int8["correct"] and not int8["exact"]
    assert 0 < int8["max_abs_error"] <= int8["error_bound"]
    jobs = report["job"]["by_format"]
    assert jobs["int32"]["id"] != jobs["int8"]["id"] and jobs["int32"]["root"] == jobs["int8"]["root"] == "spine1"

    host_links = [link for link in report["link_bytes"] if link.startswith("h")]
    assert len(host_links) == 4
    for link in host_links:
        counts = report["link_bytes"][link]
        assert set(counts) == set(modes), link  # every mode has its bytes counted
        assert 8192 * 4 <= counts["in-network"], (link, counts)  # at least the tensor up, int32
        assert counts["in-network int8"] < counts["in-network"], (link, counts)
        assert counts["gloo"] > 0 and counts["ring"] > 0

    assert not state.exists() or not any(state.iterdir()), "the run left state behind"
    for switch in ("leaf1", "leaf2", "spine1"):
        assert not Path(f"/sys/class/net/{switch}-eth1").exists(), f"{switch}-eth1 left behind"
