"""An optical circuit switch (OCS) for the Mininet fabric: a patch panel with no packet processing.

A circuit joins two OCS ports; a frame entering one leaves by the other, untouched (no parsing, no queueing
beyond the kernel's, no learning that matters: each circuit is its own two-port Linux bridge that floods). This
kernel has no tc classifiers (no `mirred` redirect) and veth ends cannot be re-paired, so a bridge per circuit is
what it does well. Reconfiguring takes `reconfig_delay` seconds, as a MEMS mirror array takes time to turn: the
circuits being changed are taken down first, carry nothing for the delay (their ports are in no bridge; the root
namespace does not forward), then come up on their new peers. Circuits that do not change keep carrying traffic.

`CircuitTable` is the model (which port is patched to which), `OpticalCircuitSwitch` applies changes with the delay
through a backend, `BridgeBackend` is the kernel backend and `OcsSwitch` the Mininet node that owns one.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mininet.node import Switch

from p4fabric.exceptions import FabricError

Circuit = tuple[int, int]


def normal(a: int, b: int) -> Circuit:
    """A circuit as (lower port, higher port): circuits are undirected."""
    return (a, b) if a < b else (b, a)


class CircuitTable:
    """Which OCS port is patched to which. A port is in at most one circuit; a circuit joins two distinct ports."""

    def __init__(self, ports: Iterable[int], circuits: Iterable[Circuit] = ()) -> None:
        self.ports = frozenset(ports)
        self._peer: dict[int, int] = {}
        for a, b in circuits:
            self.connect(a, b)

    def _check_port(self, port: int) -> None:
        if port not in self.ports:
            raise FabricError(f"OCS has no port {port}")

    def connect(self, a: int, b: int) -> None:
        self._check_port(a)
        self._check_port(b)
        if a == b:
            raise FabricError(f"a circuit joins two different ports, got {a}-{b}")
        for port in (a, b):
            if port in self._peer:
                raise FabricError(f"OCS port {port} is already patched to {self._peer[port]}")
        self._peer[a], self._peer[b] = b, a

    def disconnect(self, a: int, b: int) -> None:
        if self._peer.get(a) != b:
            raise FabricError(f"no circuit {a}-{b}")
        del self._peer[a], self._peer[b]

    def peer(self, port: int) -> int | None:
        self._check_port(port)
        return self._peer.get(port)

    def circuits(self) -> list[Circuit]:
        return sorted({normal(a, b) for a, b in self._peer.items()})

    def diff(self, target: Iterable[Circuit]) -> tuple[list[Circuit], list[Circuit]]:
        """(circuits to take down, circuits to bring up) to go from this table to `target`, which must be a valid
        table on the same ports (checked by building it)."""
        wanted = set(CircuitTable(self.ports, target).circuits())
        have = set(self.circuits())
        return sorted(have - wanted), sorted(wanted - have)


class CircuitBackend(Protocol):
    """What makes circuits real: connect and disconnect one circuit (ports as a normalised pair)."""

    def connect(self, circuit: Circuit) -> None: ...

    def disconnect(self, circuit: Circuit) -> None: ...


@dataclass(frozen=True)
class Reconfiguration:
    """One reconfiguration: what went down and came up, and how long the changed circuits were dark."""

    removed: tuple[Circuit, ...]
    added: tuple[Circuit, ...]
    dark_seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {"removed": [list(c) for c in self.removed], "added": [list(c) for c in self.added],
                "dark_s": round(self.dark_seconds, 4)}


class OpticalCircuitSwitch:
    """A `CircuitTable` applied through a backend; `reconfigure` takes `reconfig_delay` seconds during which the
    changed circuits carry nothing (an unchanged target costs nothing)."""

    def __init__(self, ports: Iterable[int], backend: CircuitBackend, *, reconfig_delay: float = 0.05,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
        if reconfig_delay < 0:
            raise FabricError(f"OCS reconfiguration delay must be >= 0, got {reconfig_delay}")
        self.table = CircuitTable(ports)
        self.backend = backend
        self.reconfig_delay = reconfig_delay
        self._sleep = sleep
        self._clock = clock

    def reconfigure(self, circuits: Iterable[Circuit]) -> Reconfiguration:
        target = [normal(a, b) for a, b in circuits]
        removed, added = self.table.diff(target)
        if not removed and not added:
            return Reconfiguration((), (), 0.0)
        start = self._clock()
        for circuit in removed:
            self.backend.disconnect(circuit)
            self.table.disconnect(*circuit)
        if self.reconfig_delay:
            self._sleep(self.reconfig_delay)
        for circuit in added:
            self.table.connect(*circuit)
            self.backend.connect(circuit)
        return Reconfiguration(tuple(removed), tuple(added), self._clock() - start)

    def clear(self) -> None:
        """Take every circuit down at once (no delay: the panel is being switched off); every circuit is tried, the
        first error raised after."""
        errors = []
        for circuit in self.table.circuits():
            try:
                self.backend.disconnect(circuit)
            except FabricError as exc:
                errors.append(exc)
            self.table.disconnect(*circuit)
        if errors:
            raise errors[0]


def _ip_batch(commands: list[str]) -> None:
    """Several `ip` commands in one process (`ip -batch`): a reconfiguration is not slowed by process start-ups."""
    done = subprocess.run(["ip", "-batch", "-"], input="\n".join(commands) + "\n", capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise FabricError(f"ip -batch ({'; '.join(commands)}): {done.stderr.strip()}")


class BridgeBackend:
    """Circuits as two-port Linux bridges in the root namespace: no STP, no learning (ageing 0: it floods to its
    one other port), no multicast snooping, no IPv6 address of its own. `interfaces[port]` is the OCS port's
    interface."""

    def __init__(self, interfaces: Mapping[int, str]) -> None:
        self.interfaces = dict(interfaces)

    def bridge_name(self, circuit: Circuit) -> str:
        return f"{self.interfaces[circuit[0]]}b"[:15]

    def connect(self, circuit: Circuit) -> None:
        bridge = self.bridge_name(circuit)
        _ip_batch([f"link add name {bridge} type bridge stp_state 0 ageing_time 0 mcast_snooping 0"])
        with contextlib.suppress(OSError):  # no IPv6 on this kernel: nothing to switch off
            Path(f"/proc/sys/net/ipv6/conf/{bridge}/disable_ipv6").write_text("1\n")
        _ip_batch([*(f"link set dev {self.interfaces[port]} master {bridge}" for port in circuit),
                   f"link set dev {bridge} up"])

    def disconnect(self, circuit: Circuit) -> None:
        """Deleting the bridge releases its ports (also when they are gone already, at the fabric's stop)."""
        _ip_batch([f"link del dev {self.bridge_name(circuit)}"])


class OcsSwitch(Switch):
    """The OCS as a Mininet node (root namespace, no processes): params `circuits` (the initial ones, as port pairs)
    and `reconfig_ms` (the reconfiguration time). `ocs` is its `OpticalCircuitSwitch` once started."""

    def __init__(self, name: str, circuits: Iterable[Circuit] = (), reconfig_ms: float = 50.0,
                 **params: Any) -> None:
        params.pop("inNamespace", None)
        Switch.__init__(self, name, inNamespace=False, **params)
        self.initial = [normal(a, b) for a, b in circuits]
        self.reconfig_delay = float(reconfig_ms) / 1000.0
        self.ocs: OpticalCircuitSwitch | None = None

    def start(self, controllers: list[Any]) -> None:
        del controllers  # a patch panel has no control channel in Mininet's sense
        interfaces = {port: intf.name for port, intf in self.intfs.items() if port > 0 and intf.name != "lo"}
        for name in interfaces.values():
            self.cmd(f"ethtool -K {name} rx off tx off sg off tso off gso off gro off >/dev/null 2>&1")
            self.cmd(f"sysctl -qw net.ipv6.conf.{name}.disable_ipv6=1")
        self.ocs = OpticalCircuitSwitch(interfaces, BridgeBackend(interfaces), reconfig_delay=self.reconfig_delay)
        self.ocs.reconfigure(self.initial)

    def stop(self, deleteIntfs: bool = True) -> None:
        if self.ocs is not None:
            ocs, self.ocs = self.ocs, None
            try:
                ocs.clear()
            except FabricError:
                pass  # interfaces already gone: their bridges went with them or are deleted by the run's clean-up
        Switch.stop(self, deleteIntfs)

    def connected(self) -> bool:
        return self.ocs is not None

    def bridge_names(self) -> list[str]:
        """The bridges of the current circuits (recorded for clean-up after a crash)."""
        if self.ocs is None:
            return []
        backend = self.ocs.backend
        assert isinstance(backend, BridgeBackend)
        return [backend.bridge_name(c) for c in self.ocs.table.circuits()]

    # what the fabric asks of every switch node when it writes the controller's topology file (the OCS is left out
    # of that file: p4fabric.ocsfabric)
    @property
    def grpc_address(self) -> str:
        return ""

    @property
    def thrift_address(self) -> str | None:
        return None
