"""The `bmv2` target: `p4c-bm2-ss` compiles, `simple_switch_grpc` runs, `simple_switch_CLI` (Thrift) does what
P4Runtime cannot on BMv2 (queue rate/depth, register reads and writes), netem impairs links.

BMv2 facts this follows (see docs/targets.md): `simple_switch_grpc` returns UNIMPLEMENTED for P4Runtime register
access, queue rate/depth are Thrift-only, and target options (`--grpc-server-addr`, `--cpu-port`,
`--priority-queues`) come after a `--` separator.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from controller import bmv2_thrift
from p4ina.targets.base import CompiledProgram, PortImpairment, RunningSwitch, SwitchConfig, Target
from p4ina.targets.exceptions import AdminError, TargetCompileError, UnsupportedOperationError
from p4ina.targets.netem import apply_netem
from p4ina.targets.process import free_tcp_port

COMPILER = "p4c-bm2-ss"
SWITCH = "simple_switch_grpc"

INSTALL_HINT = (
    "install p4lang's packages (e.g. from the openSUSE Build Service repository home:p4lang: "
    "`apt install p4lang-p4c p4lang-bmv2`) or build p4lang/behavioral-model with PI/P4Runtime support "
    "(`./configure --with-pi --with-thrift`, then targets/simple_switch_grpc) and p4lang/p4c from source; "
    "or run on the embedded target (--target embedded)"
)

_REGISTER_VALUE = re.compile(r"(?P<name>[\w.$\[\]]+)\[(?P<index>\d+)\]\s*=\s*(?P<value>-?\d+)")


class Bmv2Target(Target):
    name = "bmv2"
    required_binaries = (COMPILER, SWITCH)

    def __init__(self) -> None:
        super().__init__()
        self._cli_command: bmv2_thrift.CliCommand | None = None

    def unavailable_message(self, missing: Sequence[str]) -> str:
        return f"target bmv2 needs {' and '.join(missing)} on PATH: {INSTALL_HINT}"

    # -- compile --

    def compile(self, source: Path, out_dir: Path, *, include_dirs: Sequence[Path] = (),
                defines: Mapping[str, str] | None = None) -> CompiledProgram:
        if shutil.which(COMPILER) is None:
            self.check_available()
        if not source.exists():
            raise TargetCompileError(f"{source}: no such P4 program")
        out_dir.mkdir(parents=True, exist_ok=True)
        argv = self.compile_command(source, out_dir, include_dirs=include_dirs, defines=defines)
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise TargetCompileError((result.stderr or result.stdout).strip()
                                     or f"{COMPILER} failed with status {result.returncode}")
        program = CompiledProgram(self.name, source, *self._outputs(source, out_dir))
        for path in (program.p4info, program.device_config):
            if not path.exists():
                raise TargetCompileError(f"{COMPILER} exited 0 but did not write {path}")
        return program

    def compile_command(self, source: Path, out_dir: Path, *, include_dirs: Sequence[Path] = (),
                        defines: Mapping[str, str] | None = None) -> list[str]:
        p4info, config = self._outputs(source, out_dir)
        argv = [COMPILER, "--arch", "v1model", "--std", "p4-16", "-o", str(config), "--p4runtime-files", str(p4info)]
        for directory in include_dirs:
            argv += ["-I", str(directory)]
        for key, value in (defines or {}).items():
            argv.append(f"-D{key}={value}" if value != "" else f"-D{key}")
        argv.append(str(source))
        return argv

    @staticmethod
    def _outputs(source: Path, out_dir: Path) -> tuple[Path, Path]:
        # `.txt` is the P4Info text-format extension every p4c release recognises.
        return out_dir / f"{source.stem}.p4info.txt", out_dir / f"{source.stem}.json"

    # -- run --

    def command(self, config: SwitchConfig) -> list[str]:
        argv = [SWITCH, "--device-id", str(config.device_id)]
        if config.thrift_port is not None:
            argv += ["--thrift-port", str(config.thrift_port)]
        for port, interface in sorted(config.ports.items()):
            argv += ["-i", f"{port}@{interface}"]
        if config.pcap_dir is not None:
            argv += ["--pcap", str(config.pcap_dir)]
        if config.verbose:
            argv += ["--log-console", "-L", "debug"]
        argv += list(config.extra_args)
        argv += [str(config.device_config)] if config.device_config is not None else ["--no-p4"]
        argv += ["--", "--grpc-server-addr", config.grpc_address]
        if config.cpu_port is not None:
            if config.cpu_port == 0:
                raise ValueError(f"{config.name}: BMv2 does not accept 0 as the CPU port")
            argv += ["--cpu-port", str(config.cpu_port)]
        if config.priority_queues > 1:
            argv += ["--priority-queues", str(config.priority_queues)]
        if config.tls is not None:
            argv += config.tls.server_flags()
        return argv

    def launch(self, config: SwitchConfig) -> RunningSwitch:
        if config.thrift_port is None:
            config.thrift_port = free_tcp_port()  # admin operations need a known Thrift port
        if config.pcap_dir is not None:
            config.pcap_dir.mkdir(parents=True, exist_ok=True)
        return super().launch(config)

    # -- admin over Thrift --

    def cli_command(self, switch: RunningSwitch) -> list[str]:
        """How this switch's simple_switch_CLI is started: under an interpreter that has BMv2's Thrift modules."""
        if switch.config.thrift_port is None:
            raise AdminError(f"{switch.name}: started without a Thrift port, admin operations are unavailable")
        return [*self._cli().argv, "--thrift-ip", switch.config.grpc_host, "--thrift-port",
                str(switch.config.thrift_port)]

    def thrift_address(self, switch: RunningSwitch) -> str | None:
        """`host:port` of the switch's Thrift admin port (the controller clears registers through it)."""
        if switch.config.thrift_port is None:
            return None
        return f"{switch.config.grpc_host}:{switch.config.thrift_port}"

    def _cli(self) -> bmv2_thrift.CliCommand:
        if self._cli_command is None:
            try:
                self._cli_command = bmv2_thrift.resolve_cli()
            except bmv2_thrift.ThriftCliError as exc:
                raise UnsupportedOperationError(str(exc)) from None
        return self._cli_command

    def run_cli(self, switch: RunningSwitch, commands: Sequence[str], timeout: float = 20.0) -> str:
        """Feed commands to `simple_switch_CLI` on stdin; return its output, raising on any reported error."""
        if switch.config.thrift_port is None:
            raise AdminError(f"{switch.name}: started without a Thrift port, admin operations are unavailable")
        try:
            return bmv2_thrift.run_cli(self._cli(), switch.config.grpc_host, switch.config.thrift_port, commands,
                                       timeout=timeout, what=switch.name)
        except bmv2_thrift.ThriftCliError as exc:
            raise AdminError(str(exc)) from None

    def set_queue_rate(self, switch: RunningSwitch, rate_pps: int, port: int | None = None,
                       priority: int | None = None) -> None:
        self.run_cli(switch, [_queue_command("set_queue_rate", rate_pps, port, priority)])

    def set_queue_depth(self, switch: RunningSwitch, depth_packets: int, port: int | None = None,
                        priority: int | None = None) -> None:
        self.run_cli(switch, [_queue_command("set_queue_depth", depth_packets, port, priority)])

    def read_register(self, switch: RunningSwitch, register: str, index: int) -> int:
        output = self.run_cli(switch, [f"register_read {register} {index}"])
        for match in _REGISTER_VALUE.finditer(output):
            if int(match.group("index")) == index:
                return int(match.group("value"))
        raise AdminError(f"{switch.name}: no value in {bmv2_thrift.THRIFT_CLI}'s answer to register_read {register} {index}")

    def write_register(self, switch: RunningSwitch, register: str, index: int, value: int) -> None:
        self.run_cli(switch, [f"register_write {register} {index} {value}"])

    def set_port_impairment(self, switch: RunningSwitch, port: int, impairment: PortImpairment) -> None:
        interface = switch.config.ports.get(port)
        if interface is None:
            raise AdminError(f"{switch.name}: no port {port}")
        apply_netem(interface, impairment)


def _queue_command(verb: str, value: int, port: int | None, priority: int | None) -> str:
    if value < 0:
        raise AdminError(f"{verb}: value must not be negative, got {value}")
    if priority is not None and port is None:
        raise AdminError(f"{verb}: a priority needs a port")
    parts = [verb, str(value)]
    if port is not None:
        parts.append(str(port))
    if priority is not None:
        parts.append(str(priority))
    return " ".join(parts)
