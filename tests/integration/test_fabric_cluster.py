"""`p4ina run --cluster` end to end with this machine as the remote: a throwaway sshd on a free loopback port (its
own host key, a throwaway client key, config and PID file in a temp dir; the system's sshd and /root/.ssh are never
touched), reached through an ssh client config (`--ssh-config`) that names it `p4ina-remote`. Every node of a small
fabric is placed there by Mininet's cluster mode, so node shells, veths and switch processes are all set up over ssh,
and the in-network all-reduce must stay exact."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.integration, pytest.mark.slow]

for _module in ("controller.jobs", "hostagent.worker", "p4switch.compiler", "p4switch.switch_cli",
                "mininet.examples.cluster"):
    importlib.import_module(_module)  # a missing layer is an error, never a skip (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]
SSHD = Path("/usr/sbin/sshd")
ALIAS = "p4ina-remote"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the test's sshd exited"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"the test's sshd did not listen on {port}")


@pytest.fixture
def ssh_config(tmp_path: Path) -> Iterator[Path]:
    """A private sshd on 127.0.0.1:<free port> and the client config that reaches it as root with a throwaway key."""
    assert SSHD.exists(), "openssh-server is not installed (scripts/setup.sh installs it)"
    d = tmp_path / "ssh"
    d.mkdir(mode=0o700)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key")], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "client_key")], check=True)
    shutil.copy(d / "client_key.pub", d / "authorized_keys")
    port = _free_port()
    (d / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1:{port}\nHostKey {d / 'host_key'}\nPidFile {d / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nUseDNS no\nPermitTunnel yes\n"
        "AllowTcpForwarding yes\nMaxSessions 100\nMaxStartups 100\n")
    (d / "config").write_text(
        f"Host {ALIAS} 127.0.0.1\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
        f"  IdentityFile {d / 'client_key'}\n  IdentitiesOnly yes\n  UserKnownHostsFile {d / 'known_hosts'}\n"
        "  StrictHostKeyChecking accept-new\n  BatchMode yes\n  LogLevel ERROR\n")
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's compiled-in privilege-separation directory
    log = open(d / "sshd.log", "wb")
    proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(d / "sshd_config")], stdout=log, stderr=log)
    try:
        _wait_listening(port, proc)
        yield d / "config"
    finally:
        proc.send_signal(signal.SIGTERM)  # only the sshd this test started
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_cluster_run_over_ssh_is_exact(tmp_path: Path, ssh_config: Path) -> None:
    root_ssh = Path("/root/.ssh")
    before = sorted(p.name for p in root_ssh.rglob("*")) if root_ssh.exists() else None
    out = tmp_path / "out"
    env = dict(os.environ, P4INA_STATE_DIR=str(tmp_path / "state"))
    result = subprocess.run([sys.executable, "-m", "p4ina", "run", "--out", str(out), "--json",
                             "--cluster", ALIAS, "--ssh-config", str(ssh_config),
                             "--topo", "leafspine,2,1,1", "--size", "4096", "--count", "1"],
                            capture_output=True, text=True, timeout=120, env=env, cwd=REPO, check=False)
    assert result.stdout.strip(), f"no report; stderr:\n{result.stderr[-3000:]}"
    report = json.loads(result.stdout)
    assert report["exact"] is True and result.returncode == 0, result.stderr[-3000:]

    placement = json.loads(Path(report["files"]["placement"]).read_text())
    assert placement == {n: ALIAS for n in ("h1", "h2", "leaf1", "leaf2", "spine1")}
    started = (out / "logs" / "spine1.log").read_text().splitlines()[0]
    assert started.startswith("# p4ina: ssh ") and f"-F {ssh_config}" in started and "root@127.0.0.1" in started, started
    assert "-L 127.0.0.1:" in started, f"no P4Runtime port forward: {started}"
    sshd_log = (ssh_config.parent / "sshd.log").read_text()
    assert sshd_log.count("Accepted publickey for root") >= 5, sshd_log[-2000:]  # a shell per node at least
    after = sorted(p.name for p in root_ssh.rglob("*")) if root_ssh.exists() else None
    assert after == before, "the run changed /root/.ssh"
    state = tmp_path / "state"
    assert not state.exists() or not any(state.iterdir()), "the run left state behind"


def test_cluster_localhost_runs_host_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--cluster localhost`: Mininet's cluster classes on this machine without ssh. A process started in a host
    must be the one Popen waits for (Mininet detaches remote commands with setpgrp, which makes a local
    `mnexec -d` fork and exit at once, leaving Popen an empty exit-0 parent)."""
    from p4fabric.cluster import ClusterSpec
    from p4fabric.fabric import Fabric
    from p4fabric.topos import parse_topo_spec

    monkeypatch.setenv("P4INA_STATE_DIR", str(tmp_path / "state"))
    fabric = Fabric(parse_topo_spec("single,2"), out_dir=tmp_path / "out", cluster=ClusterSpec.parse("localhost"))
    log = tmp_path / "h1.log"
    with fabric:
        assert {getattr(n, "server", None) for n in [*fabric.hosts, *fabric.switches]} == {"localhost"}
        proc = fabric.popen("h1", [sys.executable, "-c", "import time; time.sleep(0.5); print('done', flush=True)"],
                            name="probe", log_file=log)
        assert proc.wait(30) == 0
        proc.log_handle.close()
        assert log.read_text() == "done\n"
