"""The `embedded` target: the project's own compiler (`p4switch.compiler`) and switch (`p4ina switch`), always
available. Admin operations go through the admin gRPC service the switch serves next to P4Runtime."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

from p4ina.targets.base import CompiledProgram, PortImpairment, RunningSwitch, SwitchConfig, Target
from p4ina.targets.exceptions import TargetCompileError, TargetUnavailableError, UnsupportedOperationError


class EmbeddedTarget(Target):
    name = "embedded"
    required_binaries = ()

    def compile(self, source: Path, out_dir: Path, *, include_dirs: Sequence[Path] = (),
                defines: Mapping[str, str] | None = None) -> CompiledProgram:
        compiler = _require("p4switch.compiler", "the embedded compiler")
        del compiler
        raise TargetCompileError("the embedded compiler's API is not wired into the target yet")

    def command(self, config: SwitchConfig) -> list[str]:
        argv = [sys.executable, "-m", "p4ina", "switch", "--device-id", str(config.device_id),
                "--grpc-server-addr", config.grpc_address]
        for port, interface in sorted(config.ports.items()):
            argv += ["-i", f"{port}@{interface}"]
        if config.cpu_port is not None:
            argv += ["--cpu-port", str(config.cpu_port)]
        if config.priority_queues > 1:
            argv += ["--priority-queues", str(config.priority_queues)]
        if config.pcap_dir is not None:
            argv += ["--pcap", str(config.pcap_dir)]
        if config.verbose:
            argv.append("--log-console")
        argv += list(config.extra_args)
        argv += [str(config.device_config)] if config.device_config is not None else ["--no-p4"]
        return argv

    def set_queue_rate(self, switch: RunningSwitch, rate_pps: int, port: int | None = None,
                       priority: int | None = None) -> None:
        raise _admin_unavailable()

    def set_queue_depth(self, switch: RunningSwitch, depth_packets: int, port: int | None = None,
                        priority: int | None = None) -> None:
        raise _admin_unavailable()

    def set_port_impairment(self, switch: RunningSwitch, port: int, impairment: PortImpairment) -> None:
        raise _admin_unavailable()

    def read_register(self, switch: RunningSwitch, register: str, index: int) -> int:
        raise _admin_unavailable()

    def write_register(self, switch: RunningSwitch, register: str, index: int, value: int) -> None:
        raise _admin_unavailable()


def _require(module: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise TargetUnavailableError(f"{what} ({module}) is not in this checkout") from exc


def _admin_unavailable() -> UnsupportedOperationError:
    return UnsupportedOperationError("the embedded switch's admin service (p4switch.server) is not in this checkout")
