"""`p4ina run --tls` end to end: the run makes its own PKI, every switch serves P4Runtime over mutual TLS only, the
controller connects with its certificate from the topology file, and the in-network all-reduce stays exact."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.root, pytest.mark.integration, pytest.mark.slow]

for _module in ("controller.jobs", "hostagent.worker", "p4switch.compiler", "p4switch.switch_cli"):
    importlib.import_module(_module)  # a missing layer is an error, never a skip (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]


def test_tls_run_with_priority_queues_is_exact(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = dict(os.environ, P4INA_STATE_DIR=str(tmp_path / "state"))
    result = subprocess.run([sys.executable, "-m", "p4ina", "run", "--out", str(out), "--json", "--tls",
                             "--priority-queues", "4", "--topo", "single,2", "--size", "4096", "--count", "1"],
                            capture_output=True, text=True, timeout=300, env=env, cwd=REPO, check=False)
    assert result.stdout.strip(), f"no report; stderr:\n{result.stderr[-3000:]}"
    report = json.loads(result.stdout)
    assert report["exact"] is True and result.returncode == 0, result.stderr[-3000:]

    topology = yaml.safe_load((out / "topology.yaml").read_text())
    pki = out / "pki"
    assert topology["tls"] == {"ca": str(pki / "ca.pem"), "cert": str(pki / "controller.pem"),
                               "key": str(pki / "controller.key")}
    assert [sw["priority_queues"] for sw in topology["switches"]] == [4]
    assert report["files"]["pki_ca"] == str(pki / "ca.pem")
    started = (out / "logs" / "s1.log").read_text().splitlines()[0]
    for flag in ("--grpc-server-ssl", f"--grpc-server-cert {pki / 's1.pem'}", f"--grpc-server-key {pki / 's1.key'}",
                 "--grpc-server-with-client-auth", f"--grpc-server-cacert {pki / 'ca.pem'}", "--priority-queues 4"):
        assert flag in started, f"{flag} missing from the switch's command line: {started}"
    state = tmp_path / "state"
    assert not state.exists() or not any(state.iterdir()), "the run left state behind"
