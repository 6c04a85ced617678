"""p4fabric.cluster without a network: --cluster parsing, server addresses resolved by ssh itself (`ssh -G`), the
environment prefix remote commands carry, and the ssh command lines our mixin gives Mininet's remote nodes."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from p4fabric.cli import run_options
from p4fabric.cluster import ClusterSpec, SshMixin, _env_prefix

from p4ina.cli import build_parser


def test_parse_servers_and_ssh_options(tmp_path: Path) -> None:
    spec = ClusterSpec.parse(" a, b ,,c", tmp_path / "cfg")
    assert spec.servers == ("a", "b", "c")
    assert spec.ssh_options() == ["-F", str(tmp_path / "cfg")]
    assert ClusterSpec.parse("a").ssh_options() == []
    with pytest.raises(ValueError):
        ClusterSpec.parse(" , ")


def test_server_ip_follows_the_ssh_config(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.write_text("Host far-away\n  HostName 10.1.2.3\n  Port 2222\n")
    spec = ClusterSpec.parse("far-away", cfg)
    assert spec.server_ip("far-away") == "10.1.2.3"
    assert spec.server_ip("localhost") == "127.0.0.1"  # Mininet's local server, never through ssh


def test_env_prefix_carries_the_callers_variables_not_the_session() -> None:
    prefix = _env_prefix({"P4INA_OWNER": "run-1", "HOME": "/root", "SSH_AUTH_SOCK": "/x", "PYTHONPATH": "/a b"},
                         "/work dir")
    assert prefix == ["env", "-C", "/work dir", "P4INA_OWNER=run-1", "PYTHONPATH=/a b"]
    assert _env_prefix(None, None) == []


class _Recorder(SshMixin):
    """`SshMixin` with the state `RemoteMixin.__init__` would set, and `Node._popen` replaced by a recorder."""

    ssh_options = ["-F", "/cfg"]

    def __init__(self, remote: bool, user: str) -> None:  # deliberately skips RemoteMixin.__init__ (no shell)
        self.isRemote = remote
        self.user = user
        self.sshcmd = (["sudo", "-E", "-u", user, "ssh", "-q", "-tt", f"{user}@10.0.0.9"] if remote else [])
        self.calls: list[list[str]] = []


def _record(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_popen(self: Any, cmd: list[str], **params: Any) -> list[str]:
        self.calls.append(cmd)
        return cmd

    monkeypatch.setattr("mininet.node.Node._popen", fake_popen)
    monkeypatch.setattr("p4fabric.cluster._whoami", lambda: "root")


def test_remote_command_is_one_quoted_ssh_string(monkeypatch: pytest.MonkeyPatch) -> None:
    _record(monkeypatch)
    node = _Recorder(remote=True, user="root")
    cmd = node._popen(["mnexec", "-da", "42", "echo", "a b"], tt=False, env={"K": "v w"}, cwd="/d")
    # ssh joins its arguments with spaces for the remote shell; quoting must bring back the original argv
    assert cmd[:5] == ["ssh", "-F", "/cfg", "-q", "root@10.0.0.9"]
    assert shlex.split(" ".join(cmd[5:])) == ["env", "-C", "/d", "K=v w", "mnexec", "-da", "42", "echo", "a b"]
    assert "sudo" not in cmd  # root on both ends: no sudo wrapper needed


def test_tunnel_ssh_gets_the_run_options_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    _record(monkeypatch)
    node = _Recorder(remote=False, user="root")
    cmd = node._popen(["ssh", "-n", "-o", "Tunnel=Ethernet", "-w", "9:9", "root@10.0.0.9", "echo", "@"], sudo=False)
    assert cmd == ["ssh", "-F", "/cfg", "-n", "-o", "Tunnel=Ethernet", "-w", "9:9", "root@10.0.0.9", "echo", "@"]


def test_cli_takes_cluster_options(tmp_path: Path) -> None:
    args = build_parser().parse_args(["run", "--cluster", "a,b", "--ssh-config", str(tmp_path / "c")])
    opts = run_options(args, topo="single,2", modes=("innet",), plan=None, cli=False)
    assert opts.cluster == "a,b" and opts.ssh_config == tmp_path / "c"
