"""The BMv2 tier for targets and fabrics: the same checks as the embedded ones, on real `p4c-bm2-ss` and
`simple_switch_grpc`. Skipped (with the missing binaries named, by tests/conftest.py) where BMv2 is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.bmv2]

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "p4src" / "p4ina.p4"


def test_bmv2_compiles_the_p4ina_program(tmp_path: Path) -> None:
    from p4ina.targets import get_target

    program = get_target("bmv2").compile(PROGRAM, tmp_path)
    assert "P4inaIngress.admission.job" in program.p4info_text()
    assert json.loads(program.device_config_bytes())["program"]


@pytest.mark.root
def test_bmv2_switch_starts_and_takes_thrift_admin(tmp_path: Path) -> None:
    from controller.client import SwitchClient
    from controller.p4info import load_p4info
    from p4ina.targets import SwitchConfig, get_target
    from p4ina.targets.process import free_tcp_port

    target = get_target("bmv2")
    program = target.compile(PROGRAM, tmp_path / "build")
    subprocess.run(["ip", "link", "add", "p4bm-a", "type", "veth", "peer", "name", "p4bm-b"], check=True)
    try:
        for name in ("p4bm-a", "p4bm-b"):
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
        config = SwitchConfig(name="bm1", ports={1: "p4bm-a"}, grpc_port=free_tcp_port(), cpu_port=255,
                              log_file=tmp_path / "bm1.log", priority_queues=8)
        switch = target.start(config, timeout=60)
        try:
            client = SwitchClient("bm1", switch.grpc_address, 0).connect()
            client.set_pipeline(load_p4info(program.p4info), program.device_config_bytes())
            client.close()
            target.set_queue_rate(switch, 1000)
            target.set_queue_depth(switch, 64, port=1, priority=7)
            register = "P4inaIngress.aggregation.agg_child_count"
            target.write_register(switch, register, 3, 2)
            assert target.read_register(switch, register, 3) == 2
        finally:
            switch.stop()
    finally:
        subprocess.run(["ip", "link", "del", "p4bm-a"], check=False)


@pytest.mark.root
@pytest.mark.integration
@pytest.mark.slow
def test_bmv2_leaf_spine_run_is_exact(tmp_path: Path) -> None:
    env = dict(os.environ, P4INA_STATE_DIR=str(tmp_path / "state"))
    result = subprocess.run(
        [sys.executable, "-m", "p4ina", "run", "--target", "bmv2", "--topo", "leafspine,2,2,2", "--size", "8192",
         "--count", "2", "--mode", "ring", "--mode", "innet", "--retx-timeout", "0.05", "--out", str(tmp_path / "out"),
         "--json"], capture_output=True, text=True, timeout=600, env=env, cwd=REPO, check=False)
    assert result.stdout.strip(), result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["target"] == "bmv2"
    assert report["exact"] is True, report["errors"]


@pytest.mark.root
@pytest.mark.integration
@pytest.mark.slow
def test_bmv2_spine_killed_mid_job(tmp_path: Path) -> None:
    env = dict(os.environ, P4INA_STATE_DIR=str(tmp_path / "state"))
    result = subprocess.run(
        [sys.executable, "-m", "p4ina", "run", "--target", "bmv2", "--topo", "leafspine,2,2,2", "--size", "262144",
         "--count", "3", "--kill-switch", "spine1@1", "--out", str(tmp_path / "out"), "--json"],
        capture_output=True, text=True, timeout=900, env=env, cwd=REPO, check=False)
    assert result.stdout.strip(), result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["faults"]["fired"][0]["ok"] and report["exact"] is True, report["errors"]
