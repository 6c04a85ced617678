"""The `Target` abstraction (design.md section 2): compile a program, launch a switch on given ports, wait until its
P4Runtime port answers, stop it, and the admin operations that P4Runtime does not cover.

Everything above the target (controller, agents, Mininet layer, tests) uses only this interface plus P4Runtime and
packets, so it cannot tell the embedded switch from BMv2.
"""

from __future__ import annotations

import abc
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from p4ina.targets.exceptions import SwitchStartError, TargetUnavailableError
from p4ina.targets.process import SwitchProcess, launch, wait_grpc_ready
from p4ina.targets.tls import SwitchTls


@dataclass(frozen=True)
class CompiledProgram:
    """A compiled P4 program: text-format P4Info and the target's device config (what SetForwardingPipelineConfig
    carries as `p4_device_config`)."""

    target: str
    source: Path
    p4info: Path
    device_config: Path

    def p4info_text(self) -> str:
        return self.p4info.read_text()

    def device_config_bytes(self) -> bytes:
        return self.device_config.read_bytes()


@dataclass(frozen=True)
class PortImpairment:
    """Link impairments on one switch port, applied to packets the port sends (egress) unless `direction` says
    otherwise. Probabilities are fractions in [0, 1]; `seed` makes a run reproducible."""

    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    corrupt: float = 0.0
    direction: str = "egress"
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("loss", "duplicate", "reorder", "corrupt"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a fraction in [0, 1], got {value}")
        if self.delay_ms < 0 or self.jitter_ms < 0:
            raise ValueError("delay and jitter must not be negative")
        if self.direction not in ("egress", "ingress", "both"):
            raise ValueError(f"direction must be egress, ingress or both, got {self.direction!r}")

    @property
    def is_null(self) -> bool:
        return not (self.loss or self.duplicate or self.reorder or self.delay_ms or self.jitter_ms or self.corrupt)


@dataclass
class SwitchConfig:
    """How to run one switch: its ports (port number -> Linux interface), its P4Runtime address and its files."""

    name: str
    ports: Mapping[int, str]
    grpc_port: int
    log_file: Path
    device_id: int = 0
    grpc_host: str = "127.0.0.1"
    cpu_port: int | None = None
    #: Thrift port (BMv2's admin channel); the embedded target's admin service shares the gRPC port.
    thrift_port: int | None = None
    priority_queues: int = 1
    #: Port speed the switch's MAC times received PFC pauses with (None: the target's default, 10 Gb/s).
    link_bps: float | None = None
    pcap_dir: Path | None = None
    pid_file: Path | None = None
    verbose: bool = False
    #: Device config to load at start; None starts without a pipeline (`--no-p4`), the controller pushes one.
    device_config: Path | None = None
    impairments: Mapping[int, PortImpairment] = field(default_factory=dict)
    #: Written into the child's environment (`P4INA_OWNER`) so clean-up can prove a PID is still ours.
    owner: str = "p4ina"
    extra_args: Sequence[str] = ()
    #: Serve P4Runtime over mutual TLS with these files (None: plain text, as BMv2's default).
    tls: SwitchTls | None = None

    def __post_init__(self) -> None:
        for port in self.ports:
            if not 0 <= port < 511:
                raise ValueError(f"{self.name}: port {port} out of range 0..510")
        if self.cpu_port is not None and self.cpu_port in self.ports:
            raise ValueError(f"{self.name}: CPU port {self.cpu_port} is also a data port")
        if self.link_bps is not None and not 0 < self.link_bps < float("inf"):
            raise ValueError(f"{self.name}: link speed {self.link_bps} bit/s is not positive")
        for port in self.impairments:
            if port not in self.ports:
                raise ValueError(f"{self.name}: impairment on port {port}, which is not one of its ports")

    @property
    def grpc_address(self) -> str:
        return f"{self.grpc_host}:{self.grpc_port}"


@dataclass
class RunningSwitch:
    """A switch the target launched: its config and process. Admin operations take this handle."""

    config: SwitchConfig
    process: SwitchProcess
    target: Target

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def grpc_address(self) -> str:
        return self.config.grpc_address

    def stop(self) -> None:
        self.process.stop()

    def kill(self) -> None:
        self.process.kill()


class Target(abc.ABC):
    """One implementation per switch target. Subclasses fill in the tools, the command line and the admin calls."""

    name: ClassVar[str]
    #: Executables the target needs on PATH (checked by `missing()`).
    required_binaries: ClassVar[tuple[str, ...]] = ()

    def missing(self) -> list[str]:
        """Required executables that are not on PATH (empty when the target can run here)."""
        return [b for b in self.required_binaries if shutil.which(b) is None]

    def check_available(self) -> None:
        missing = self.missing()
        if missing:
            raise TargetUnavailableError(self.unavailable_message(missing))

    def unavailable_message(self, missing: Sequence[str]) -> str:
        return f"target {self.name}: missing {', '.join(missing)} on PATH"

    def thrift_address(self, switch: RunningSwitch) -> str | None:
        """`host:port` of an admin port that writes registers where P4Runtime cannot (BMv2's Thrift); None when
        P4Runtime register writes work, as on the embedded target."""
        del switch
        return None

    @abc.abstractmethod
    def compile(self, source: Path, out_dir: Path, *, include_dirs: Sequence[Path] = (),
                defines: Mapping[str, str] | None = None) -> CompiledProgram:
        """Compile `source` into P4Info + device config under `out_dir`."""

    @abc.abstractmethod
    def command(self, config: SwitchConfig) -> list[str]:
        """The command line that runs the switch described by `config`."""

    def launch(self, config: SwitchConfig) -> RunningSwitch:
        """Start the switch process (without waiting for it). Impairments are applied by `start`."""
        self.check_available()
        process = launch(config.name, self.command(config), log_file=config.log_file, pid_file=config.pid_file,
                         owner=config.owner)
        return RunningSwitch(config, process, self)

    def wait_ready(self, switch: RunningSwitch, timeout: float = 30.0) -> None:
        wait_grpc_ready(switch.process, switch.grpc_address, timeout, tls=switch.config.tls)

    def start(self, config: SwitchConfig, timeout: float = 30.0) -> RunningSwitch:
        """Launch, wait until P4Runtime answers and apply the configured impairments; stop it again on failure."""
        switch = self.launch(config)
        try:
            self.wait_ready(switch, timeout)
            self.apply_initial_impairments(switch)
        except BaseException:
            switch.stop()
            raise
        return switch

    def apply_initial_impairments(self, switch: RunningSwitch) -> None:
        """Apply `config.impairments` once the switch answers (targets that take them as flags override this)."""
        for port, impairment in switch.config.impairments.items():
            if not impairment.is_null:
                self.set_port_impairment(switch, port, impairment)

    def stop(self, switch: RunningSwitch) -> None:
        switch.stop()

    # -- admin operations (debugging and emulation; never needed by the data path) --

    @abc.abstractmethod
    def set_queue_rate(self, switch: RunningSwitch, rate_pps: int, port: int | None = None,
                       priority: int | None = None) -> None:
        """Egress queue service rate in packets/s, for one port (and priority) or all ports."""

    @abc.abstractmethod
    def set_queue_depth(self, switch: RunningSwitch, depth_packets: int, port: int | None = None,
                        priority: int | None = None) -> None:
        """Egress queue depth in packets, for one port (and priority) or all ports."""

    @abc.abstractmethod
    def set_port_impairment(self, switch: RunningSwitch, port: int, impairment: PortImpairment) -> None:
        """Loss/duplication/reordering/delay on one port (a null impairment clears it)."""

    @abc.abstractmethod
    def read_register(self, switch: RunningSwitch, register: str, index: int) -> int:
        """One register cell, for debugging (`register` is the P4Info name, e.g. `Ingress.agg.values`)."""

    @abc.abstractmethod
    def write_register(self, switch: RunningSwitch, register: str, index: int, value: int) -> None:
        """Overwrite one register cell (fault injection: a bit flip in a switch)."""


def describe_start_failure(switch: RunningSwitch, what: str) -> SwitchStartError:
    tail = switch.process.log_tail()
    return SwitchStartError(f"switch {switch.name} {what} (log: {switch.process.log_file})"
                            + (f"\n--- log tail ---\n{tail}" if tail else ""))
