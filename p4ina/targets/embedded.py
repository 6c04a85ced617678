"""The `embedded` target: the project's own compiler (`p4switch.compiler`) and switch (`p4ina switch`), always
available. Launch-time impairments are `--impair` flags; admin operations at run time go through the switch's
`p4ina.Admin` gRPC service, served on the P4Runtime port (p4switch/server/admin.py)."""

from __future__ import annotations

import importlib
import sys
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from p4ina.targets.base import CompiledProgram, PortImpairment, RunningSwitch, SwitchConfig, Target
from p4ina.targets.exceptions import AdminError, TargetCompileError, TargetUnavailableError, UnsupportedOperationError
from p4ina.targets.tls import open_channel

_DIRECTIONS = {"egress": "out", "ingress": "in", "both": "both"}


class EmbeddedTarget(Target):
    name = "embedded"
    required_binaries = ()

    # -- compile --

    def compile(self, source: Path, out_dir: Path, *, include_dirs: Sequence[Path] = (),
                defines: Mapping[str, str] | None = None) -> CompiledProgram:
        try:
            compiler = importlib.import_module("p4switch.compile_cache")
        except ModuleNotFoundError as exc:
            raise TargetUnavailableError("the embedded compiler (p4switch.compile_cache) is not in this checkout") from exc
        if not source.exists():
            raise TargetCompileError(f"{source}: no such P4 program")
        out_dir.mkdir(parents=True, exist_ok=True)
        return _compile_with(compiler, source, out_dir, include_dirs, defines or {})

    # -- run --

    def command(self, config: SwitchConfig) -> list[str]:
        argv = [sys.executable, "-m", "p4ina", "switch", "--device-id", str(config.device_id),
                "--grpc-server-addr", config.grpc_address]
        for port, interface in sorted(config.ports.items()):
            argv += ["-i", f"{port}@{interface}"]
        if config.cpu_port is not None:
            argv += ["--cpu-port", str(config.cpu_port)]
        if config.priority_queues > 1:
            argv += ["--priority-queues", str(config.priority_queues)]
        if config.link_bps is not None:
            argv += ["--link-bps", repr(float(config.link_bps))]
        if config.pcap_dir is not None:
            argv += ["--pcap", str(config.pcap_dir)]
        if config.verbose:
            argv += ["--log-console", "--log-level", "debug"]
        for port, impairment in sorted(config.impairments.items()):
            if not impairment.is_null:
                argv += ["--impair", impair_flag(config.name, port, impairment)]
        if config.tls is not None:
            argv += config.tls.server_flags()
        argv += list(config.extra_args)
        argv += [str(config.device_config)] if config.device_config is not None else ["--no-p4"]
        return argv

    def apply_initial_impairments(self, switch: RunningSwitch) -> None:
        """Already applied at launch by `--impair` flags."""

    # -- admin (p4ina.Admin over the P4Runtime port) --

    def admin(self, switch: RunningSwitch, method: str, args: dict[str, Any]) -> dict[str, Any]:
        import grpc

        from p4switch.server.admin import call

        channel = open_channel(switch.grpc_address, switch.config.tls)
        try:
            return call(channel, method, args)
        except grpc.RpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.UNIMPLEMENTED:
                raise UnsupportedOperationError(f"{switch.name}: {method}: {exc.details()}") from None
            raise AdminError(f"{switch.name}: {method}: {code.name}: {exc.details()}") from None
        finally:
            channel.close()

    def _ports(self, switch: RunningSwitch, port: int | None) -> list[int]:
        if port is None:
            return sorted(switch.config.ports)
        if port not in switch.config.ports and port != switch.config.cpu_port:
            raise AdminError(f"{switch.name}: no port {port}")
        return [port]

    def set_queue_rate(self, switch: RunningSwitch, rate_pps: int, port: int | None = None,
                       priority: int | None = None) -> None:
        for p in self._ports(switch, port):
            args: dict[str, Any] = {"port": p, "rate_pps": int(rate_pps)}
            if priority is not None:
                args["priority"] = priority
            self.admin(switch, "set_queue_rate", args)

    def set_queue_depth(self, switch: RunningSwitch, depth_packets: int, port: int | None = None,
                        priority: int | None = None) -> None:
        for p in self._ports(switch, port):
            args: dict[str, Any] = {"port": p, "depth": int(depth_packets)}
            if priority is not None:
                args["priority"] = priority
            self.admin(switch, "set_queue_depth", args)

    def set_port_impairment(self, switch: RunningSwitch, port: int, impairment: PortImpairment) -> None:
        if impairment.jitter_ms or impairment.corrupt:
            raise UnsupportedOperationError(
                "jitter and corruption can only be set when the switch starts (SwitchConfig.impairments)")
        self._ports(switch, port)
        self.admin(switch, "set_impairment", {
            "port": port, "direction": _DIRECTIONS[impairment.direction], "loss": impairment.loss,
            "dup": impairment.duplicate, "reorder": impairment.reorder, "delay_ms": impairment.delay_ms,
            "seed": impairment_seed(switch.name, port, impairment)})

    def read_register(self, switch: RunningSwitch, register: str, index: int) -> int:
        cells = self.admin(switch, "read_register", {"register": register, "index": index}).get("cells")
        if not isinstance(cells, list) or len(cells) != 1:
            raise AdminError(f"{switch.name}: unexpected answer to read_register {register}[{index}]: {cells!r}")
        return int(cells[0])

    def write_register(self, switch: RunningSwitch, register: str, index: int, value: int) -> None:
        self.admin(switch, "write_register", {"register": register, "index": index, "value": value})


def impairment_seed(switch: str, port: int, impairment: PortImpairment) -> int:
    """A seed per (switch, port): reproducible runs, yet ports that do not drop the same packets in lockstep."""
    return zlib.crc32(f"{switch}:{port}:{impairment.seed or 0}".encode()) & 0x7FFFFFFF


def impair_flag(switch: str, port: int, impairment: PortImpairment) -> str:
    """`p4ina switch --impair PORT:DIR:k=v,...` for one port."""
    if impairment.corrupt:
        raise UnsupportedOperationError("the embedded switch does not corrupt packets; use --bitflip for corruption")
    options = {"loss": impairment.loss, "dup": impairment.duplicate, "reorder": impairment.reorder,
               "delay_ms": impairment.delay_ms, "jitter_ms": impairment.jitter_ms}
    text = ",".join(f"{k}={v:g}" for k, v in options.items() if v)
    return f"{port}:{_DIRECTIONS[impairment.direction]}:{text},seed={impairment_seed(switch, port, impairment)}"


def _compile_with(compiler: Any, source: Path, out_dir: Path, include_dirs: Sequence[Path],
                  defines: Mapping[str, str]) -> CompiledProgram:
    from p4switch.exceptions import P4SwitchError

    try:
        outputs = compiler.compile_cached(source, include_dirs=tuple(str(d) for d in include_dirs),
                                          defines={k: (v if v != "" else None) for k, v in defines.items()})
        p4info_path, config_path = compiler.write_outputs(outputs, out_dir)
        _prime_pipeline_cache(Path(config_path))
    except P4SwitchError as exc:  # CompileError carries the rendered `file:line:col: error:` diagnostics
        raise TargetCompileError(str(exc)) from None
    except OSError as exc:
        raise TargetCompileError(f"{exc.filename or out_dir}: {exc.strerror or exc}") from None
    return CompiledProgram("embedded", source, Path(p4info_path), Path(config_path))


def _prime_pipeline_cache(config_path: Path) -> None:
    """Compile the device config once here, exactly as a switch compiles a pushed config, so that its on-disk
    pipeline cache holds it: every switch of a fabric then loads the program (about 1 s of CPU for p4ina.p4 at 256
    values per packet) instead of compiling it again (about 5 s each, all at once on shared cores)."""
    from p4switch import device_config, device_loader

    device_loader.compile_config(device_config.parse(config_path.read_bytes()))
