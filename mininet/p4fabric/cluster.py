"""Fabrics across machines with Mininet's own cluster mode (mininet.examples.cluster): `MininetCluster` places the
nodes on servers, `RemoteMixin` runs each remote node's shell over ssh, `RemoteLink` turns a link between servers into
an ssh (tap) tunnel. This module only adapts our nodes to that engine:

- `ClusterSwitch`: a `P4Switch` whose switch process is started over ssh on its server (in that server's root
  namespace, where Mininet put its ports); the same ssh forwards a local port to the switch's P4Runtime port, so the
  controller reaches every switch at 127.0.0.1 whatever machine it runs on.
- `ClusterHost` / `ClusterLink`: Mininet's remote host and link with our interface class (tc shaping, impairments).
- every ssh Mininet runs gets the run's ssh options (`-F config`), so a test can point it at its own sshd without
  touching the system's ssh configuration; as root, Mininet's `sudo` wrappers are dropped (no sudo needed).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mininet.examples.cluster import MininetCluster, RemoteLink, RemoteMixin, SwitchBinPlacer
from mininet.node import Host, Node

from p4fabric.exceptions import FabricStartError
from p4fabric.node import P4Intf, P4Switch
from p4ina.targets import RunningSwitch, SwitchConfig, TargetError
from p4ina.targets.process import OWNER_ENV, free_tcp_port, launch

#: Mininet's name for this machine (no ssh).
LOCAL = "localhost"


@dataclass(frozen=True)
class ClusterSpec:
    """Where a run's nodes go: `servers` (Mininet placement order), the ssh client config every ssh uses, and the
    login user on the servers (root: the nodes need namespaces and veths there)."""

    servers: tuple[str, ...]
    ssh_config: Path | None = None
    user: str = "root"
    extra_ssh: tuple[str, ...] = field(default=())

    @classmethod
    def parse(cls, text: str, ssh_config: Path | None = None) -> ClusterSpec:
        servers = tuple(s.strip() for s in text.split(",") if s.strip())
        if not servers:
            raise ValueError("--cluster needs at least one server")
        return cls(servers=servers, ssh_config=ssh_config)

    def ssh_options(self) -> list[str]:
        opts = ["-F", str(self.ssh_config)] if self.ssh_config is not None else []
        return opts + list(self.extra_ssh)

    def server_ip(self, server: str) -> str:
        """The address ssh connects to for `server` (`ssh -G` resolves config aliases; Mininet's own look-up,
        `getent`, knows nothing of them)."""
        if server == LOCAL:
            return "127.0.0.1"
        out = subprocess.run(["ssh", *self.ssh_options(), "-G", server], capture_output=True, text=True, check=False)
        for line in out.stdout.splitlines():
            key, _, value = line.partition(" ")
            if key == "hostname" and value:
                return value.strip()
        raise FabricStartError(f"cannot resolve cluster server {server!r}: {out.stderr.strip() or 'no hostname'}")


class SshMixin(RemoteMixin):
    """`RemoteMixin` with the run's ssh options and without sudo when we already are the remote user (root)."""

    ssh_options: list[str] = []

    def _popen(self, cmd: Any, sudo: bool = True, tt: bool = True, **params: Any) -> Any:
        if isinstance(cmd, str):
            cmd = cmd.split()
        cmd = list(cmd)
        if cmd and cmd[0] == "ssh":  # Mininet's tunnel command: same options as the node's own ssh
            cmd = ["ssh", *self.ssh_options, *cmd[1:]]
        if self.isRemote:
            env = params.pop("env", None)
            cwd = params.pop("cwd", None)
            cmd = [*_env_prefix(env, cwd), *cmd]
            if sudo and self.user != "root":
                cmd = ["sudo", "-E", *cmd]
            ssh = [w for w in self.ssh_command() if tt or w != "-tt"]
            cmd = [*ssh, *(shlex.quote(w) for w in cmd)]  # ssh hands the remote shell one string
        elif self.user and not sudo and self.user != _whoami():
            cmd = ["sudo", "-E", "-u", self.user, *cmd]
        if self.isRemote or cmd[:1] == ["ssh"]:
            # Mininet detaches its ssh processes from our signals. Not a local command: `mnexec -d` in a process
            # that already leads its group forks and the parent exits at once, so Popen would see the worker "exit".
            params.update(preexec_fn=self._ignoreSignal)
        return Node._popen(self, cmd, **params)

    def ssh_command(self) -> list[str]:
        """ssh to this node's server, without Mininet's `sudo -u` wrapper when we already are that user."""
        cmd = list(self.sshcmd)
        if cmd[:4] == ["sudo", "-E", "-u", self.user] and self.user == _whoami():
            cmd = cmd[4:]
        return [cmd[0], *self.ssh_options, *cmd[1:]]


class ClusterHost(SshMixin, Host):
    """A Mininet host on any server."""


class ClusterSwitch(SshMixin, P4Switch):
    """A P4 switch on any server. On a remote one, the target's command runs over `ssh -tt` (the switch gets a
    hang-up when that ssh ends) and the ssh forwards 127.0.0.1:<local port> here to its P4Runtime port there."""

    def start(self, controllers: list[Any]) -> None:
        if not self.isRemote:
            P4Switch.start(self, controllers)
            return
        self.disable_offloads()
        remote_port = self.grpc_port or free_tcp_port()
        local_port = free_tcp_port()
        while local_port == remote_port:
            local_port = free_tcp_port()
        config = SwitchConfig(
            name=self.name, ports=self.port_map(), grpc_port=remote_port, log_file=self.log_dir / f"{self.name}.log",
            device_id=self.device_id, cpu_port=self.cpu_port, priority_queues=self.priority_queues,
            link_bps=self.link_bps, pcap_dir=self.log_dir / "pcap" / self.name if self.pcap else None,
            verbose=self.verbose, device_config=self.device_config, impairments=self.port_impairments(),
            owner=self.owner, tls=self.tls)
        argv = [*_env_prefix({OWNER_ENV: self.owner}, None), *self.target.command(config)]
        *ssh_opts, dest = self.ssh_command()
        ssh = [*ssh_opts, "-o", "ExitOnForwardFailure=yes", "-L", f"127.0.0.1:{local_port}:127.0.0.1:{remote_port}",
               dest]
        local = dataclasses.replace(config, grpc_port=local_port,
                                    pid_file=self.pid_dir / f"{self.name}.pid" if self.pid_dir else None)
        try:
            process = launch(self.name, [*ssh, *(shlex.quote(w) for w in argv)], log_file=local.log_file,
                             pid_file=local.pid_file, owner=self.owner)
            self.running = RunningSwitch(local, process, self.target)
            self.target.wait_ready(self.running, self.start_timeout)
            self.target.apply_initial_impairments(self.running)
        except TargetError as exc:
            if self.running is not None:
                self.running.stop()
            raise FabricStartError(f"{self.name} on {self.server}: {exc}") from None
        self.grpc_port = local_port


class ClusterLink(RemoteLink):
    """Mininet's `RemoteLink` (a veth pair on one server, an ssh tap tunnel between two) with `P4Intf` ends."""

    def __init__(self, node1: Any, node2: Any, port1: int | None = None, port2: int | None = None,
                 intfName1: str | None = None, intfName2: str | None = None, addr1: str | None = None,
                 addr2: str | None = None, **params: Any) -> None:
        RemoteLink.__init__(self, node1, node2, port1=port1, port2=port2, intfName1=intfName1,
                            intfName2=intfName2, cls1=P4Intf, cls2=P4Intf, addr1=addr1, addr2=addr2,
                            params1=params, params2=params)


def node_classes(spec: ClusterSpec) -> tuple[type[ClusterHost], type[ClusterSwitch]]:
    """Host and switch classes carrying this run's ssh options (Mininet builds each node's ssh command in its
    constructor, from the class's `sshbase`)."""
    attrs = {"ssh_options": spec.ssh_options()}
    return (type("RunClusterHost", (ClusterHost,), dict(attrs)),
            type("RunClusterSwitch", (ClusterSwitch,), dict(attrs)))


def make_cluster_net(spec: ClusterSpec, *, topo: Any, switch: Any, host: type[Node], home: Path,
                     **params: Any) -> MininetCluster:
    """`MininetCluster` over `spec.servers` (SwitchBinPlacer: each server gets a run of switches with their hosts).
    HOME points at `home` while it is built: Mininet makes `$HOME/.ssh/mn`, which must not be the user's."""
    server_ip = {server: spec.server_ip(server) for server in spec.servers}
    saved = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        return MininetCluster(topo=topo, switch=switch, host=host, link=ClusterLink, servers=list(spec.servers),
                              serverIP=server_ip, user=spec.user, placement=SwitchBinPlacer, precheck=False,
                              **params)
    finally:
        if saved is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = saved


def placement(net: Any) -> dict[str, str]:
    """Node name -> server it was placed on."""
    return {node.name: getattr(node, "server", LOCAL) for node in [*net.hosts, *net.switches]}


def write_placement(path: Path, net: Any) -> Path:
    """The run's placement as JSON (node -> server), for the report."""
    path.write_text(json.dumps(placement(net), indent=2, sort_keys=True) + "\n")
    return path


def _env_prefix(env: dict[str, str] | None, cwd: str | None) -> list[str]:
    """`env -C cwd K=V ...` for a remote command: ssh carries no environment, so the caller's variables travel on
    the command line (all but the login session's own)."""
    if env is None and cwd is None:
        return []
    out = ["env"]
    if cwd:
        out += ["-C", str(cwd)]
    for key, value in sorted((env or {}).items()):
        if key not in _SESSION_VARS and not key.startswith(("SSH_", "SUDO_", "XDG_")) and "\n" not in value:
            out.append(f"{key}={value}")
    return out


_SESSION_VARS = frozenset({"HOME", "USER", "LOGNAME", "SHELL", "TERM", "PWD", "OLDPWD", "SHLVL", "MAIL", "_",
                           "LS_COLORS", "DISPLAY"})


def _whoami() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


