"""Mininet nodes for P4 switches: `P4Switch` runs the chosen target's switch in the root namespace with its ports on
the Mininet veths; `P4Link`/`P4Intf` shape bandwidth with tc and turn loss/duplication/reordering/delay into the
switch's port impairments (this kernel has no netem; the embedded switch impairs packets itself)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mininet.link import Intf, Link, TCIntf
from mininet.log import info
from mininet.node import Host, Switch

from p4fabric.exceptions import FabricStartError
from p4ina.targets import (
    PortImpairment,
    RunningSwitch,
    SwitchConfig,
    SwitchTls,
    Target,
    TargetError,
    get_target,
)
from p4ina.targets.process import free_tcp_port

DEFAULT_LOG_DIR = Path("/tmp/p4ina-mn")


def percent(value: float | str | None) -> float:
    """A Mininet-style percentage (`2`, `"2%"`) as a fraction (0.02)."""
    if value is None or value == "":
        return 0.0
    text = str(value).strip().rstrip("%")
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"not a percentage: {value!r}") from None
    if not 0.0 <= number <= 100.0:
        raise ValueError(f"percentage out of range 0..100: {value!r}")
    return number / 100.0


def milliseconds(value: float | str | None) -> float:
    """A Mininet-style delay (`5`, `"5ms"`, `"200us"`, `"0.1s"`) in milliseconds."""
    if value is None or value == "":
        return 0.0
    match = re.fullmatch(r"\s*([0-9.]+)\s*(us|ms|s)?\s*", str(value))
    if not match:
        raise ValueError(f"not a delay: {value!r}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0, None: 1.0}[match.group(2)]
    return float(match.group(1)) * scale


#: Launches of a switch whose automatically chosen gRPC port was taken before it could bind it.
PORT_RACE_ATTEMPTS = 3


def _lost_port_race(message: str) -> bool:
    """Whether a start failure says the gRPC address was in use (p4ina switch's and gRPC's wordings)."""
    lowered = message.lower()
    return "address in use" in lowered or "address already in use" in lowered or "failed to bind" in lowered


#: htb quantum of a shaped link's one class, in bytes: a 9000-byte-MTU frame with its Ethernet header.
HTB_QUANTUM = 9014


class P4Intf(TCIntf):
    """An interface whose bandwidth limit uses tc (htb/tbf exist here) and whose loss/duplication/reordering/delay
    are kept as `impairment` for the switch to apply. Checksum offload is off: a P4 switch reading raw frames must
    see real checksums, not the partial ones a veth leaves for offload."""

    impairment: PortImpairment = PortImpairment()

    def config(self, bw: float | None = None, delay: Any = None, jitter: Any = None, loss: Any = None,
               dup: Any = None, reorder: Any = None, seed: int | None = None, **params: Any) -> Any:
        self.impairment = PortImpairment(loss=percent(loss), duplicate=percent(dup), reorder=percent(reorder),
                                         delay_ms=milliseconds(delay), jitter_ms=milliseconds(jitter), seed=seed)
        params.setdefault("txo", False)
        params.setdefault("rxo", False)
        return TCIntf.config(self, bw=bw, **params)

    def bwCmds(self, *args: Any, **kwargs: Any) -> tuple[list[str], str]:
        """Mininet's tc commands with an explicit htb quantum: otherwise tc takes rate/r2q, which passes its
        200,000-byte limit from 16 Mbit/s up and makes tc warn on every shaped link (one class: the quantum only
        has to hold the largest frame)."""
        cmds, parent = TCIntf.bwCmds(self, *args, **kwargs)
        return [f"{c} quantum {HTB_QUANTUM}" if " htb rate " in c else c for c in cmds], parent


class P4Link(Link):
    """Mininet's TCLink with `P4Intf` at both ends."""

    def __init__(self, node1: Any, node2: Any, port1: int | None = None, port2: int | None = None,
                 intfName1: str | None = None, intfName2: str | None = None, addr1: str | None = None,
                 addr2: str | None = None, **params: Any) -> None:
        Link.__init__(self, node1, node2, port1=port1, port2=port2, intfName1=intfName1, intfName2=intfName2,
                      cls1=P4Intf, cls2=P4Intf, addr1=addr1, addr2=addr2, params1=params, params2=params)


class P4Switch(Switch):
    """A P4 switch run by a `Target` (`embedded` by default, `bmv2`, or `auto`), listening for P4Runtime on
    127.0.0.1. Params: target, grpc_port, device_id, cpu_port, log_dir, pcap (bool), verbose, device_config,
    priority_queues, link_bps (port speed pause quanta are timed with; embedded target), owner (run id for
    clean-up), pid_dir, start_timeout, tls (a `SwitchTls`: serve P4Runtime over
    mutual TLS). Role hints from the topology (role,
    group, coord) are kept in `self.params` for the controller's topology file."""

    def __init__(self, name: str, target: str | Target = "embedded", grpc_port: int | None = None,
                 device_id: int = 0, cpu_port: int | None = None, log_dir: str | Path | None = None,
                 pcap: bool | str = False, verbose: bool | str = False, device_config: str | Path | None = None,
                 priority_queues: int = 1, owner: str = "p4ina", pid_dir: str | Path | None = None,
                 start_timeout: float = 60.0, tls: SwitchTls | None = None, link_bps: float | str | None = None,
                 **params: Any) -> None:
        Switch.__init__(self, name, **params)
        self.target = target if isinstance(target, Target) else get_target(str(target))
        self.grpc_port = int(grpc_port) if grpc_port else None
        self.device_id = int(device_id)
        self.cpu_port = int(cpu_port) if cpu_port is not None else None
        self.log_dir = Path(log_dir) if log_dir else DEFAULT_LOG_DIR
        self.pcap = _flag(pcap)
        self.verbose = _flag(verbose)
        self.device_config = Path(device_config) if device_config else None
        self.priority_queues = int(priority_queues)
        self.link_bps = float(link_bps) if link_bps is not None else None
        self.owner = owner
        self.pid_dir = Path(pid_dir) if pid_dir else None
        self.start_timeout = float(start_timeout)
        self.tls = tls
        self.running: RunningSwitch | None = None

    # -- Mininet's switch interface --

    def start(self, controllers: list[Any]) -> None:
        del controllers  # the control plane speaks P4Runtime to grpc_address, not OpenFlow
        self.disable_offloads()
        chosen = self.grpc_port is None
        for attempt in range(PORT_RACE_ATTEMPTS):
            try:
                return self._start_once()
            except FabricStartError as exc:
                # A port free when chosen can be taken by another process before the switch binds it: choose again.
                if not chosen or attempt + 1 == PORT_RACE_ATTEMPTS or not _lost_port_race(str(exc)):
                    raise
                self.grpc_port = None

    def _start_once(self) -> None:
        config = SwitchConfig(
            name=self.name, ports=self.port_map(), grpc_port=self.grpc_port or free_tcp_port(),
            log_file=self.log_dir / f"{self.name}.log", device_id=self.device_id, cpu_port=self.cpu_port,
            priority_queues=self.priority_queues, link_bps=self.link_bps, pcap_dir=self.log_dir / "pcap" / self.name if self.pcap else None,
            pid_file=self.pid_dir / f"{self.name}.pid" if self.pid_dir else None, verbose=self.verbose,
            device_config=self.device_config, impairments=self.port_impairments(), owner=self.owner, tls=self.tls,
        )
        self.grpc_port = config.grpc_port
        try:
            self.running = self.target.start(config, timeout=self.start_timeout)
        except TargetError as exc:
            raise FabricStartError(str(exc)) from None
        info(f"({self.name}: {self.target.name} P4Runtime{' (TLS)' if self.tls else ''} at {config.grpc_address}, log {config.log_file}) ")

    def stop(self, deleteIntfs: bool = True) -> None:
        if self.running is not None:
            self.running.stop()
        Switch.stop(self, deleteIntfs)

    def connected(self) -> bool:
        return self.running is not None and self.running.process.alive()

    # -- what the runner and fault injection use --

    @property
    def grpc_address(self) -> str:
        if self.grpc_port is None:
            raise FabricStartError(f"{self.name} has not started")
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def thrift_address(self) -> str | None:
        """The target's register-admin address (BMv2's Thrift port), None where P4Runtime writes registers."""
        return self.target.thrift_address(self.running) if self.running is not None else None

    def port_map(self) -> dict[int, str]:
        """P4 port number -> interface name (Mininet's port numbers, which the topology file also uses)."""
        return {port: intf.name for port, intf in sorted(self.intfs.items()) if intf.name != "lo" and port > 0}

    def port_impairments(self) -> dict[int, PortImpairment]:
        """Impairments from the link options. A switch-switch link is impaired at each end's egress (as tc would
        do at each interface); a host link only has a switch end, which impairs both directions where the target
        can (embedded), else egress."""
        out: dict[int, PortImpairment] = {}
        for port, intf in self.intfs.items():
            impairment = getattr(intf, "impairment", None)
            if port <= 0 or impairment is None or impairment.is_null:
                continue
            if _peer_is_host(intf) and self.target.name == "embedded":
                impairment = PortImpairment(**{**vars(impairment), "direction": "both"})
            out[port] = impairment
        return out

    def disable_offloads(self) -> None:
        """Checksum offload off on both ends of every port (whatever link class built them): a switch reading raw
        frames must see finished checksums, and so must a host behind it."""
        for port, intf in self.intfs.items():
            if port <= 0:
                continue
            self.cmd(f"ethtool -K {intf.name} rx off tx off sg off tso off gso off gro off >/dev/null 2>&1")
            self.cmd(f"sysctl -qw net.ipv6.conf.{intf.name}.disable_ipv6=1")
            peer = _peer(intf)
            if peer is not None:
                peer.node.cmd(f"ethtool -K {peer.name} rx off tx off sg off tso off gso off gro off >/dev/null 2>&1")

    def kill(self) -> None:
        """Fault injection: the switch dies without shutting down."""
        if self.running is not None:
            self.running.kill()


def _peer(intf: Intf) -> Intf | None:
    link = intf.link
    if link is None:
        return None
    return link.intf2 if link.intf1 is intf else link.intf1


def _peer_is_host(intf: Intf) -> bool:
    peer = _peer(intf)
    return peer is not None and isinstance(peer.node, Host)


def _flag(value: bool | str) -> bool:
    return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes", "on")
