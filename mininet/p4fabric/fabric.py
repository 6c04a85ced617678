"""An emulated fabric: a Mininet network of P4 switches (one `Target`) and hosts, recorded in a `RunState` so that
it is always torn down, also after a crash. Use as a context manager; `stop()` is idempotent."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host

from p4fabric.cleanup import RunState
from p4fabric.cluster import ClusterSpec, make_cluster_net, node_classes
from p4fabric.exceptions import FabricError, FabricStartError
from p4fabric.node import P4Link, P4Switch
from p4fabric.topofile import write_topology_file
from p4fabric.topos import FabricTopo
from p4ina.pki import FabricPki, make_fabric_pki
from p4ina.targets import SwitchTls, Target, get_target
from p4ina.targets.process import OWNER_ENV


class Fabric:
    """Mininet fabric of `P4Switch`es for `topo`; logs (and pcaps) under `out_dir/logs`."""

    def __init__(self, topo: FabricTopo, *, target: str | Target = "embedded", out_dir: Path,
                 run: RunState | None = None, pcap: bool = False, verbose: bool = False, cpu_port: int | None = None,
                 device_config: Path | None = None, start_timeout: float = 60.0, mininet_log: str = "warning",
                 intf_tag: str | None = None, priority_queues: int = 1, tls: bool = False,
                 link_bps: float | None = None, mtu: int | None = None, cluster: ClusterSpec | None = None) -> None:
        self.topo = topo
        #: Servers to spread the nodes over with Mininet's cluster mode (p4fabric.cluster); None: this machine only.
        self.cluster = cluster
        #: MTU of every link's two ends (None: the kernel's 1500); jumbo frames for wide aggregation packets.
        self.mtu = mtu
        self.target = target if isinstance(target, Target) else get_target(target)
        self.out_dir = out_dir
        self.log_dir = out_dir / "logs"
        self.run = run or RunState()
        self.cpu_port = cpu_port
        self.priority_queues = int(priority_queues)
        self.tls = tls
        #: The run's throwaway PKI (`out_dir/pki`), made by `start()` when `tls` is set.
        self.pki: FabricPki | None = None
        self._switch_params: dict[str, Any] = dict(
            target=self.target, log_dir=self.log_dir, pcap=pcap, verbose=verbose, cpu_port=cpu_port,
            device_config=device_config, owner=self.run.run_id, pid_dir=self.run.dir / "pids",
            start_timeout=start_timeout, priority_queues=self.priority_queues, link_bps=link_bps)
        self.net: Mininet | None = None
        self._saved_owner: str | None = None
        if intf_tag:
            tag_switch_interfaces(topo, intf_tag)
        self._mininet_log = mininet_log
        self._switch_class: type[P4Switch] = P4Switch

    def _make_switch(self, name: str, **params: Any) -> P4Switch:
        """Mininet's switch factory: the fabric-wide parameters, and this switch's certificate on a TLS run."""
        merged = {**self._switch_params, **params}
        if self.pki is not None:
            merged["tls"] = switch_tls(self.pki, name)
        return self._switch_class(name, **merged)

    # -- life cycle --

    def start(self) -> Fabric:
        if os.geteuid() != 0:
            raise FabricStartError("an emulated fabric needs root (network namespaces and veth pairs)")
        setLogLevel(self._mininet_log)
        self.run.create()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if self.tls and self.pki is None:
            self.pki = make_fabric_pki(self.out_dir / "pki", {sw: ["127.0.0.1"] for sw in self.topo.switches()},
                                       clients=(CONTROLLER_CLIENT, LAUNCHER_CLIENT))
        self._saved_owner = os.environ.get(OWNER_ENV)
        os.environ[OWNER_ENV] = self.run.run_id  # inherited by Mininet's node shells and everything they start
        if self.cluster is not None:
            host_class, self._switch_class = node_classes(self.cluster)
            self.net = make_cluster_net(self.cluster, topo=self.topo, switch=self._make_switch, host=host_class,
                                        home=self.run.dir, controller=None, build=False, autoSetMacs=False,
                                        autoStaticArp=False, waitConnected=False)
        else:
            self.net = Mininet(topo=self.topo, switch=self._make_switch, link=P4Link, host=Host, controller=None,
                               build=False, autoSetMacs=False, autoStaticArp=False, waitConnected=False)
        try:
            self.net.build()
            self._record_nodes()
            if self.mtu is not None:
                self._set_mtu(self.mtu)
            self.net.start()
            self.net.staticArp()
            for host in self.net.hosts:
                host.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        except BaseException as exc:
            self.stop()
            if isinstance(exc, FabricError | KeyboardInterrupt | SystemExit):
                raise
            raise FabricStartError(f"could not build the fabric: {exc}") from exc
        return self

    def _set_mtu(self, mtu: int) -> None:
        """Both ends of every link (hosts in their namespace, switch ports in the root one): ring, gloo and
        aggregation traffic all cross the same MTU."""
        assert self.net is not None
        for link in self.net.links:
            for intf in (link.intf1, link.intf2):
                out = intf.node.cmd(f"ip link set dev {intf.name} mtu {mtu}").strip()
                if out:
                    raise FabricStartError(f"cannot set MTU {mtu} on {intf.name}: {out}")

    def _record_nodes(self) -> None:
        assert self.net is not None
        for node in [*self.net.hosts, *self.net.switches]:
            if node.pid and not getattr(node, "isRemote", False):  # a remote PID is another machine's
                self.run.record_pid(f"shell-{node.name}", node.pid)
        self.run.record_interfaces(intf.name for sw in self.net.switches for intf in sw.intfList()
                                   if intf.name != "lo")

    def stop(self) -> None:
        net, self.net = self.net, None
        if net is not None:
            with contextlib.suppress(Exception):
                net.stop()
        self.run.cleanup()
        if self._saved_owner is None:
            os.environ.pop(OWNER_ENV, None)
        else:
            os.environ[OWNER_ENV] = self._saved_owner

    def __enter__(self) -> Fabric:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- access --

    def _require_net(self) -> Mininet:
        if self.net is None:
            raise FabricError("the fabric is not running")
        return self.net

    @property
    def switches(self) -> list[P4Switch]:
        return list(self._require_net().switches)

    @property
    def hosts(self) -> list[Host]:
        return list(self._require_net().hosts)

    def node(self, name: str) -> Any:
        net = self._require_net()
        if name not in net.nameToNode:
            raise FabricError(f"no node {name!r} in the fabric")
        return net.nameToNode[name]

    def switch(self, name: str) -> P4Switch:
        node = self.node(name)
        if not isinstance(node, P4Switch):
            raise FabricError(f"{name} is not a switch")
        return node

    def grpc_addresses(self) -> dict[str, str]:
        return {sw.name: sw.grpc_address for sw in self.switches}

    def write_topology(self, path: Path) -> Any:
        """Write the controller's topology file; returns the controller `Topology`."""
        tls = None
        if self.pki is not None:
            controller = self.pki.clients[CONTROLLER_CLIENT]
            tls = {"ca": str(self.pki.ca_cert), "cert": str(controller.cert), "key": str(controller.key)}
        return write_topology_file(path, self.topo, self.grpc_addresses(),
                                   cpu_ports={sw.name: self.cpu_port for sw in self.switches},
                                   priority_queues=self.priority_queues, tls=tls,
                                   thrift={sw.name: sw.thrift_address for sw in self.switches})

    def set_link(self, a: str, b: str, up: bool) -> None:
        """Bring the link between nodes `a` and `b` down or up (both ends), as a cable pull would."""
        net = self._require_net()
        links = net.linksBetween(self.node(a), self.node(b))
        if not links:
            raise FabricError(f"no link between {a} and {b}")
        net.configLinkStatus(a, b, "up" if up else "down")

    def popen(self, host: str, argv: list[str], *, name: str, log_file: Path, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> Any:
        """Start `argv` in host `host`'s namespace with output to `log_file`; its PID is recorded for clean-up."""
        node = self.node(host)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handle = open(log_file, "ab")  # closed by the caller, with the process
        child_env = dict(os.environ)
        child_env.update(env or {})
        child_env[OWNER_ENV] = self.run.run_id
        proc = node.popen(argv, stdout=handle, stderr=handle, env=child_env, cwd=str(cwd) if cwd else None)
        proc.log_handle = handle
        self.run.record_pid(name, proc.pid)
        return proc


#: Client identities of a TLS run: the controller's (in the topology file) and the launcher's own (readiness probe,
#: admin calls such as fault injection).
CONTROLLER_CLIENT = "controller"
LAUNCHER_CLIENT = "launcher"


def switch_tls(pki: FabricPki, switch: str) -> SwitchTls:
    """The TLS files switch `switch` serves with, and the launcher's client certificate to reach it."""
    server = pki.servers.get(switch)
    if server is None:
        raise FabricStartError(f"the run's PKI has no certificate for switch {switch}")
    launcher = pki.clients[LAUNCHER_CLIENT]
    return SwitchTls(cert=server.cert, key=server.key, ca=pki.ca_cert, client_cert=launcher.cert,
                     client_key=launcher.key)


#: Linux limits interface names to 15 characters.
IFNAMSIZ = 15


def tag_switch_interfaces(topo: FabricTopo, tag: str) -> None:
    """Name every switch port `<tag><switch>-<port>` instead of Mininet's `<switch>-eth<port>`. Switch ports live
    in the root namespace, where names are global: the tag keeps concurrent runs apart. Host ends keep Mininet's
    names (they are created inside the host's namespace)."""
    for a, b, _key, info in topo.iterLinks(withKeys=True, withInfo=True):
        for node, port, field_name in ((a, info["port1"], "intfName1"), (b, info["port2"], "intfName2")):
            if topo.isSwitch(node):
                name = f"{tag}{node}-{port}"
                if len(name) > IFNAMSIZ:
                    raise FabricError(f"interface name {name!r} is longer than {IFNAMSIZ} characters; "
                                      "use shorter switch names")
                info[field_name] = name
