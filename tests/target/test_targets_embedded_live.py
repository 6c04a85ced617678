"""The embedded target end to end on loopback: `p4ina switch --no-p4` starts, answers P4Runtime, takes admin calls,
reports bad ones clearly, and stops by PID (no root: a switch without ports)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p4ina.targets import AdminError, SwitchConfig, SwitchStartError, get_target
from p4ina.targets.process import free_tcp_port


def _p4ina_switch_runs() -> str | None:
    result = subprocess.run([sys.executable, "-m", "p4ina", "switch", "--help"], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        return lines[-1] if lines else f"exit {result.returncode}"
    return None


@pytest.fixture(scope="module")
def p4ina_switch() -> None:
    problem = _p4ina_switch_runs()
    assert problem is None, f"`p4ina switch --help` fails: {problem}"  # a failure, never a skip


@pytest.mark.usefixtures("p4ina_switch")
def test_embedded_switch_starts_answers_admin_and_stops(tmp_path: Path) -> None:
    target = get_target("embedded")
    config = SwitchConfig(name="lone", ports={}, grpc_port=free_tcp_port(), log_file=tmp_path / "lone.log",
                          pid_file=tmp_path / "lone.pid")
    switch = target.start(config, timeout=60)
    try:
        assert int(config.pid_file.read_text()) == switch.process.pid  # type: ignore[union-attr]
        with pytest.raises(AdminError, match="no pipeline installed"):
            target.read_register(switch, "Ingress.r", 0)
        with pytest.raises(AdminError, match="no port 3"):
            target.set_queue_rate(switch, 100, port=3)
    finally:
        switch.stop()
    assert not switch.process.alive() and not config.pid_file.exists()  # type: ignore[union-attr]
    switch.stop()


@pytest.mark.usefixtures("p4ina_switch")
def test_embedded_switch_bad_interface_fails_with_log_tail(tmp_path: Path) -> None:
    config = SwitchConfig(name="broken", ports={1: "p4ina-nosuchif"}, grpc_port=free_tcp_port(),
                          log_file=tmp_path / "broken.log")
    with pytest.raises(SwitchStartError) as info:
        get_target("embedded").start(config, timeout=60)
    message = str(info.value)
    assert "switch broken exited" in message and "p4ina-nosuchif" in message and "broken.log" in message
