"""`p4ina switch`: run the embedded v1model switch with simple_switch(_grpc)'s flags.

    p4ina switch prog.json -i 0@p0 -i 1@p1 --use-files 0            # pcap files p0_in.pcap -> p0_out.pcap, then exit
    p4ina switch prog.json -i 1@veth1 -i 2@veth2 --grpc-server-addr 127.0.0.1:9559 --cpu-port 255
    p4ina switch --no-p4 -i 1@veth1 --grpc-server-addr 0.0.0.0:9559  # wait for a pipeline over P4Runtime
    p4ina-simple-switch-grpc -i 1@s1-eth1 --device-id 0 build/prog.json --log-console -- --cpu-port 255

`p4ina-simple-switch-grpc` is the same command under a name the P4 tutorials' scripts accept as BMV2_SWITCH_EXE:
it serves P4Runtime on 0.0.0.0:9559 unless told otherwise, as simple_switch_grpc does. BMv2 options with no
meaning here (`--thrift-port`, `--nanolog`, `--debugger`, ...) are accepted with a warning.
Errors are one line on stderr and exit status 1 (2 for bad flags); SIGTERM/SIGINT stop a live switch cleanly.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from p4switch.exceptions import DeviceConfigError, P4SwitchError, SwitchStartError

log = logging.getLogger("p4switch.switch")

# Control-plane protection defaults: well above what a controller of this project consumes, well below a flood.
DEFAULT_PACKET_IN_RATE = 10000.0
DEFAULT_PACKET_IN_BURST = 1000
DEFAULT_DIGEST_RATE = 1000.0
DEFAULT_DIGEST_BURST = 100

SIMPLE_SWITCH_GRPC_ALIAS = "p4ina-simple-switch-grpc"
SIMPLE_SWITCH_GRPC_ADDRESS = "0.0.0.0:9559"  # simple_switch_grpc's default --grpc-server-addr
# BMv2's -L/--log-level values -> Python logging levels ("trace" has no own level here: per-packet debug it is)
LOG_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
              "warning": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}
# BMv2 options that configure something this switch does not have: accepted, warned about, otherwise ignored.
IGNORED_OPTIONS = {
    "thrift_port": "--thrift-port: no Thrift server here; use P4Runtime (--grpc-server-addr) or the p4ina.Admin service",
    "nanolog": "--nanolog: no nanomsg event log here; use --log-console or --log-file",
    "debugger": "--debugger: no BMv2 debugger here",
    "debugger_addr": "--debugger-addr: no BMv2 debugger here",
    "notifications_addr": "--notifications-addr: no nanomsg notifications here; digests go over P4Runtime",
    "dump_packet_data": "--dump-packet-data: not implemented; --log-console -L debug logs every packet's path",
    "enable_swap": "--enable-swap: a pipeline swap is always enabled (SetForwardingPipelineConfig)",
}


def _rate(text: str) -> float | None:
    """`--cpu-rate`/`--digest-rate`: a non-negative number per second, or `off`."""
    if text.strip().lower() == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate (a number per second, or off)") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate (a number per second >= 0, or off)")
    return value


def _link_bps(text: str) -> float:
    """`--link-bps`: a positive port speed in bit/s (1e9, 10e6, ...)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a link speed (bits per second, e.g. 1e9)") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a link speed (bits per second > 0)")
    return value


class SwitchArgumentParser(argparse.ArgumentParser):
    """Splits the command line at the first `--` before parsing, as BMv2's parser does: what follows are target
    options (`args.target_options`). Plain argparse binds DEVICE_CONFIG and the options after `--` in one go, so
    `... prog.json --log-console -- --grpc-server-addr X` (the P4 tutorials' order) would be refused."""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        tail: list[str] = []
        if "--" in argv:
            cut = argv.index("--")
            argv, tail = argv[:cut], argv[cut + 1:]
        parsed, extras = super().parse_known_args(argv, namespace)
        parsed.target_options = tail
        return parsed, extras


def register(subparsers: argparse._SubParsersAction) -> None:
    parser_class = subparsers._parser_class
    subparsers._parser_class = SwitchArgumentParser  # the `switch` subcommand parses `--` as BMv2 does
    try:
        p = subparsers.add_parser(
            "switch",
            help="run the embedded v1model switch (pcap files or Linux interfaces, P4Runtime server)",
            description="Run the embedded v1model switch. Flags follow BMv2's simple_switch / simple_switch_grpc; "
            "target options (--grpc-server-addr, --cpu-port, --priority-queues, --device-id, the TLS flags) may "
            "also follow `--`.",
        )
    finally:
        subparsers._parser_class = parser_class
    add_arguments(p)
    p.set_defaults(handler=main)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `p4ina switch`, shared with the `p4ina-simple-switch-grpc` console script."""
    p.add_argument("device_config", nargs="?", metavar="DEVICE_CONFIG", help="compiler output (<name>.json)")
    p.add_argument("--grpc-server-ssl", action="store_true", help="serve P4Runtime over TLS")
    p.add_argument("--grpc-server-cert", metavar="PEM", help="server certificate (with --grpc-server-ssl)")
    p.add_argument("--grpc-server-key", metavar="PEM", help="server private key (with --grpc-server-ssl)")
    p.add_argument("--grpc-server-cacert", "--grpc-client-ca", dest="grpc_server_cacert", metavar="PEM",
                   help="CA that signs client certificates (BMv2's spelling: --grpc-server-cacert)")
    p.add_argument("--grpc-server-with-client-auth", action="store_true", help="require client certificates")
    p.add_argument("--cpu-rate", type=_rate, default=DEFAULT_PACKET_IN_RATE, metavar="PPS|off",
                   help=f"police packet-ins to the controller at PPS (default {DEFAULT_PACKET_IN_RATE:g}; off: no cap)")
    p.add_argument("--cpu-burst", type=int, default=DEFAULT_PACKET_IN_BURST, metavar="N",
                   help=f"packet-in policer burst (default {DEFAULT_PACKET_IN_BURST})")
    p.add_argument("--digest-rate", type=_rate, default=DEFAULT_DIGEST_RATE, metavar="LISTS|off",
                   help=f"police digest lists to the controller, per second (default {DEFAULT_DIGEST_RATE:g})")
    p.add_argument("--digest-burst", type=int, default=DEFAULT_DIGEST_BURST, metavar="N",
                   help=f"digest policer burst (default {DEFAULT_DIGEST_BURST})")
    p.add_argument("--no-p4", action="store_true", help="start without a pipeline (push one over P4Runtime)")
    p.add_argument(
        "-i", "--interface", action="append", default=[], metavar="N@NAME",
        help="attach port N to interface NAME (or to pcap files NAME_in/NAME_out.pcap with --use-files)",
    )
    p.add_argument(
        "--use-files", type=int, metavar="WAIT", default=None,
        help="pcap file mode; WAIT (seconds in BMv2) is accepted and not needed: processing is deterministic",
    )
    p.add_argument("--files-dir", default=".", metavar="DIR", help="where the pcap files of --use-files are")
    p.add_argument("--device-id", type=int, default=0, metavar="N")
    p.add_argument("--grpc-server-addr", metavar="HOST:PORT", help="serve P4Runtime on this address")
    p.add_argument("--cpu-port", type=int, default=None, metavar="N", help="port number of the CPU (packet-in/out)")
    p.add_argument("--priority-queues", type=int, default=1, metavar="N", help="egress queues per port")
    p.add_argument("--queue-depth", type=int, default=None, metavar="PKTS", help="initial depth of every queue")
    p.add_argument("--link-bps", type=_link_bps, default=None, metavar="BPS",
                   help="port speed the MAC times received PFC pause quanta with (512 bit times each; default 10e9)")
    p.add_argument(
        "--queue-rate", action="append", default=[], metavar="PORT[:PRIO]=PPS",
        help="rate-limit an egress queue at start (BMv2 does this with set_queue_rate over Thrift)",
    )
    p.add_argument("--port-io", choices=("auto", "ring", "socket"), default="auto",
                   help="interface I/O: mmap rx ring + sendmmsg, falling back to one call per packet (auto); "
                        "the ring or fail (ring); one call per packet (socket)")
    p.add_argument("--log-console", action="store_true", help="log to stderr (per-packet events at debug level)")
    p.add_argument("-L", "--log-level", default="info", choices=tuple(LOG_LEVELS),
                   help="log level (BMv2's names: trace, debug, info, warn, error, off; default info)")
    p.add_argument("--log-file", metavar="FILE", default=None,
                   help="log to FILE.txt (BMv2 appends .txt); exclusive with --log-console")
    p.add_argument("--log-flush", action="store_true", help="accepted: every log line is flushed anyway")
    p.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR", help="capture every port to DIR")
    p.add_argument("--entries", metavar="FILE", help="P4Runtime WriteRequest (text format) to install first")
    p.add_argument("--p4info", metavar="FILE", help="P4Info (default: <name>.p4info.txtpb next to the config)")
    p.add_argument("--seed", type=int, default=None, help="seed for random() and hash 'random'")
    p.add_argument(
        "--impair", action="append", default=[], metavar="PORT[:DIR]:K=V,...",
        help="impair a port, e.g. 1:out:loss=0.1,dup=0.01,reorder=0.05,corrupt=0.001,delay_ms=2,jitter_ms=1,seed=7",
    )
    bmv2 = p.add_argument_group("BMv2 options accepted for compatibility and ignored (with a warning)")
    bmv2.add_argument("--thrift-port", type=int, default=None, metavar="N")
    bmv2.add_argument("--nanolog", default=None, metavar="ADDR")
    bmv2.add_argument("--debugger", action="store_true", default=None)
    bmv2.add_argument("--debugger-addr", default=None, metavar="ADDR")
    bmv2.add_argument("--notifications-addr", default=None, metavar="ADDR")
    bmv2.add_argument("--dump-packet-data", type=int, default=None, metavar="N")
    bmv2.add_argument("--max-port-count", type=int, default=None, metavar="N", help="accepted silently")


def main(args: argparse.Namespace) -> int:
    try:
        _configure_logging(args)
        _merge_target_options(args)
        _warn_ignored(args)
        default_address = getattr(args, "default_grpc_server_addr", None)
        if default_address and not args.grpc_server_addr and args.use_files is None:
            args.grpc_server_addr = default_address
        if args.use_files is not None:
            return _run_files(args)
        return _run_live(args)
    except P4SwitchError as exc:
        print(f"p4ina switch: error: {_one_line(exc)}", file=sys.stderr)
        return 1


def _merge_target_options(args: argparse.Namespace) -> None:
    """simple_switch_grpc takes its target options after `--` (`... -- --grpc-server-addr 0.0.0.0:9559
    --cpu-port 255`): accept the same, so scripts written for BMv2 run unchanged."""
    rest = list(args.target_options or [])
    if args.device_config is not None and args.device_config.startswith("-"):
        rest.insert(0, args.device_config)  # after `--`, argparse hands the first option to DEVICE_CONFIG
        args.device_config = None
    if not rest:
        return
    target = argparse.ArgumentParser(prog="p4ina switch --", add_help=False, exit_on_error=False)
    target.add_argument("--grpc-server-addr")
    target.add_argument("--drop-port", type=int)
    target.add_argument("--enable-swap", action="store_true", default=None)
    target.add_argument("--cpu-port", type=int)
    target.add_argument("--priority-queues", type=int)
    target.add_argument("--device-id", type=int)
    target.add_argument("--grpc-server-ssl", action="store_true")
    target.add_argument("--grpc-server-cert")
    target.add_argument("--grpc-server-key")
    target.add_argument("--grpc-server-cacert", "--grpc-client-ca", dest="grpc_server_cacert")
    target.add_argument("--grpc-server-with-client-auth", action="store_true")
    try:
        opts, unknown = target.parse_known_args(rest)
    except argparse.ArgumentError as exc:
        raise SwitchStartError(f"bad target option: {exc}") from None
    if unknown:
        raise SwitchStartError(f"unknown target option(s): {' '.join(unknown)}")
    if opts.drop_port is not None and opts.drop_port != 511:
        raise SwitchStartError(f"--drop-port {opts.drop_port}: this switch drops on port 511 only (v1model's default)")
    for name, value in vars(opts).items():
        if value not in (None, False):
            setattr(args, name, value)


def _tls_options(args: argparse.Namespace) -> Any:
    if not args.grpc_server_ssl:
        if args.grpc_server_cert or args.grpc_server_key:
            raise SwitchStartError("--grpc-server-cert/--grpc-server-key need --grpc-server-ssl")
        return None
    if not args.grpc_server_cert or not args.grpc_server_key:
        raise SwitchStartError("--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key")
    if args.grpc_server_with_client_auth and not args.grpc_server_cacert:
        raise SwitchStartError("--grpc-server-with-client-auth needs --grpc-server-cacert")
    from p4switch.server import TlsOptions

    return TlsOptions(
        cert=Path(args.grpc_server_cert),
        key=Path(args.grpc_server_key),
        client_ca=Path(args.grpc_server_cacert) if args.grpc_server_with_client_auth else None,
    )


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _warn_ignored(args: argparse.Namespace) -> None:
    for name, message in IGNORED_OPTIONS.items():
        if getattr(args, name, None) not in (None, False):
            log.warning("%s (ignored)", message)


def _configure_logging(args: argparse.Namespace) -> None:
    """`--log-console`: stderr at `-L` (default info); `--log-file F`: F.txt at `-L`, as BMv2 names it;
    neither: warnings and errors to stderr."""
    level = LOG_LEVELS[args.log_level]
    detailed = "%(asctime)s %(name)s %(levelname)s %(message)s"
    log_file = getattr(args, "log_file", None)
    if log_file and args.log_console:
        raise SwitchStartError("--log-console and --log-file are exclusive")
    if log_file:
        path = Path(log_file + ".txt")
        try:
            handler: logging.Handler = logging.FileHandler(path, mode="w")
        except OSError as exc:
            raise SwitchStartError(f"cannot open log file {path}: {exc.strerror}") from None
        handler.setFormatter(logging.Formatter(detailed))
        logging.basicConfig(level=level, handlers=[handler])
    elif args.log_console:
        logging.basicConfig(level=level, stream=sys.stderr, format=detailed)
    else:
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="p4ina switch: %(levelname)s: %(message)s")


# --------------------------------------------------------------------------------------------------- config


def find_p4info(config_path: Path) -> Path | None:
    """The first P4Info next to DEVICE_CONFIG that a p4ina or p4c-style build leaves (`p4info_candidates`)."""
    from p4switch.p4info_files import p4info_candidates

    return next((c for c in p4info_candidates(config_path) if c.is_file()), None)


def _load_program(args: argparse.Namespace) -> tuple[Any, bytes] | None:
    from p4switch.p4info_files import read_p4info

    if args.no_p4:
        if args.device_config:
            raise SwitchStartError("give either DEVICE_CONFIG or --no-p4, not both")
        return None
    if not args.device_config:
        raise SwitchStartError("no DEVICE_CONFIG given (use --no-p4 to start without a pipeline)")
    config_path = Path(args.device_config)
    try:
        device_config = config_path.read_bytes()
    except OSError as exc:
        raise DeviceConfigError(f"cannot read device config {config_path}: {exc.strerror}") from None
    p4info_path = Path(args.p4info) if args.p4info else find_p4info(config_path)
    if p4info_path is None or not p4info_path.exists():
        where = p4info_path or config_path.with_name(config_path.stem + ".p4info.txtpb")
        raise DeviceConfigError(f"no P4Info at {where} (give --p4info FILE)")
    return read_p4info(p4info_path), device_config


def _interfaces(args: argparse.Namespace) -> dict[int, str]:
    from p4switch.switch.ports import parse_interface_spec

    ports: dict[int, str] = {}
    for spec in args.interface:
        port, name = parse_interface_spec(spec)
        if port in ports:
            raise SwitchStartError(f"port {port} given twice ({ports[port]} and {name})")
        if args.cpu_port is not None and port == args.cpu_port and args.use_files is None:
            raise SwitchStartError(f"port {port} is also the CPU port")  # file mode may record CPU traffic
        ports[port] = name
    return ports


def parse_impairment(spec: str) -> tuple[int, str, dict[str, float]]:
    """`PORT[:DIR]:k=v,...` -> (port, direction, options)."""
    parts = spec.split(":")
    if len(parts) == 2:
        port_text, direction, opts = parts[0], "both", parts[1]
    elif len(parts) == 3:
        port_text, direction, opts = parts
    else:
        raise SwitchStartError(f"bad --impair {spec!r}: expected PORT[:in|out|both]:key=value,...")
    try:
        port = int(port_text)
    except ValueError:
        raise SwitchStartError(f"bad --impair {spec!r}: port {port_text!r} is not a number") from None
    allowed = {"loss", "dup", "reorder", "delay_ms", "jitter_ms", "corrupt", "seed"}
    options: dict[str, float] = {}
    for item in filter(None, opts.split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in allowed:
            raise SwitchStartError(f"bad --impair {spec!r}: {item!r} (keys: {', '.join(sorted(allowed))})")
        try:
            options[key] = float(value)
        except ValueError:
            raise SwitchStartError(f"bad --impair {spec!r}: {key} value {value!r} is not a number") from None
    return port, direction, options


def _impairment_configs(args: argparse.Namespace) -> dict[tuple[int, str], Any]:
    from p4switch.switch.impairments import DIRECTIONS, ImpairmentConfig

    configs: dict[tuple[int, str], ImpairmentConfig] = {}
    for spec in args.impair:
        port, direction, opts = parse_impairment(spec)
        if direction not in (*DIRECTIONS, "both"):
            raise SwitchStartError(f"bad --impair {spec!r}: direction must be in, out or both")
        seed = int(opts.pop("seed", 0))
        for i, d in enumerate(DIRECTIONS if direction == "both" else (direction,)):
            cfg = ImpairmentConfig(**opts, seed=seed + i)
            cfg.validate()
            configs[(port, d)] = cfg
    return configs


def _queue_rates(args: argparse.Namespace) -> list[tuple[int, int | None, float]]:
    rates = []
    for spec in args.queue_rate:
        where, sep, value = spec.partition("=")
        port_text, _, prio_text = where.partition(":")
        try:
            rates.append((int(port_text), int(prio_text) if prio_text else None, float(value)))
        except ValueError:
            raise SwitchStartError(f"bad --queue-rate {spec!r}: expected PORT[:PRIORITY]=PPS") from None
        if not sep or rates[-1][2] < 0:
            raise SwitchStartError(f"bad --queue-rate {spec!r}: expected PORT[:PRIORITY]=PPS")
        prio = rates[-1][1]
        if prio is not None and not 0 <= prio < args.priority_queues:
            raise SwitchStartError(
                f"bad --queue-rate {spec!r}: priority {prio} out of range 0..{args.priority_queues - 1}"
            )
    return rates


# ----------------------------------------------------------------------------------------------- file mode


def _run_files(args: argparse.Namespace) -> int:
    from p4switch.switch.entries_file import load_entries
    from p4switch.switch.filemode import FileModeRunner, TickClock
    from p4switch.switch.pipeline import build_pipeline

    if args.grpc_server_addr:
        raise SwitchStartError("--use-files runs to completion and exits; it cannot serve --grpc-server-addr")
    ports = _interfaces(args)
    if not ports:
        raise SwitchStartError("file mode needs at least one -i N@NAME")
    files_dir = Path(args.files_dir)
    if not files_dir.is_dir():
        raise SwitchStartError(f"pcap directory {files_dir} does not exist")
    if args.pcap is not None:
        capture_dir = Path(args.pcap)
        if not capture_dir.is_dir():
            raise SwitchStartError(f"pcap directory {capture_dir} does not exist")
        if capture_dir.resolve() == files_dir.resolve():
            raise SwitchStartError("--pcap DIR must differ from --files-dir: the capture would overwrite the input files")
    loaded = _load_program(args)
    if loaded is None:
        raise SwitchStartError("file mode needs a DEVICE_CONFIG")
    p4info, device_config = loaded
    clock = TickClock()
    pipeline = build_pipeline(p4info, device_config, seed=args.seed, clock_us=clock)
    if args.entries:
        load_entries(pipeline.state, args.entries)
    runner = FileModeRunner(
        pipeline,
        ports,
        directory=files_dir,
        priority_queues=args.priority_queues,
        cpu_port=args.cpu_port,
        impairments=_impairment_configs(args),
        clock=clock,
    )
    result = runner.run()
    if args.pcap is not None:
        _copy_file_mode_capture(args.pcap, files_dir, ports)
    log.info("file mode: in %s, out %s, %s", result.packets_in, result.packets_out, result.counters)
    return 0


def _copy_file_mode_capture(directory: str, files_dir: Path, ports: dict[int, str]) -> None:
    from p4switch.switch.ports import PortCapture, read_pcap

    capture = PortCapture(directory, ports)
    try:
        for port, name in ports.items():
            path = files_dir / f"{name}_in.pcap"
            if path.exists():
                for _, frame in read_pcap(path):
                    capture.incoming(port, frame)
            for _, frame in read_pcap(files_dir / f"{name}_out.pcap"):
                capture.outgoing(port, frame)
    finally:
        capture.close()


# ------------------------------------------------------------------------------------------------ live mode


def _run_live(args: argparse.Namespace) -> int:
    from p4switch.switch.core import Switch
    from p4switch.switch.entries_file import load_entries

    ports = _interfaces(args)
    rates = _queue_rates(args)
    loaded = _load_program(args)
    kwargs: dict[str, Any] = {}
    if args.queue_depth is not None:
        kwargs["queue_depth"] = args.queue_depth
    if args.link_bps is not None:
        kwargs["link_bps"] = args.link_bps
    switch = Switch(
        device_id=args.device_id,
        cpu_port=args.cpu_port,
        priority_queues=args.priority_queues,
        seed=args.seed,
        port_io=args.port_io,
        **kwargs,
    )
    server: Any = None
    stop = threading.Event()
    try:
        if loaded is not None:
            switch.install_pipeline(*loaded)
            if args.entries:
                load_entries(switch.state, args.entries)
        elif args.entries:
            raise SwitchStartError("--entries needs a DEVICE_CONFIG")
        for port, ifname in ports.items():
            switch.add_interface(port, ifname)
        for (port, direction), cfg in _impairment_configs(args).items():
            switch.set_impairment(
                port, direction, loss=cfg.loss, dup=cfg.dup, reorder=cfg.reorder,
                delay_ms=cfg.delay_ms, jitter_ms=cfg.jitter_ms, seed=cfg.seed, corrupt=cfg.corrupt,
            )
        for port, prio, pps in rates:
            switch.set_queue_rate(port, pps, prio)
        if args.pcap is not None:
            switch.enable_capture(args.pcap)
        if args.grpc_server_addr:
            server = _start_server(switch, args.grpc_server_addr, args.device_id, _tls_options(args),
                                   _policers(args))
        elif args.grpc_server_ssl:
            raise SwitchStartError("--grpc-server-ssl needs --grpc-server-addr")

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        switch.start()
        where = f", P4Runtime on {args.grpc_server_addr}" if args.grpc_server_addr else ""
        print(
            f"p4ina switch: device {args.device_id} running, ports "
            f"{', '.join(f'{p}@{n}' for p, n in sorted(ports.items())) or 'none'}{where}"
            f"{f' (port I/O: {switch.port_io_summary()})' if ports else ''}",
            file=sys.stderr,
            flush=True,
        )
        while not stop.wait(0.5):
            pass
    finally:
        if server is not None:
            try:
                server.stop()
            except Exception:
                log.exception("P4Runtime server did not stop cleanly")
        switch.stop()
    return 0


def _policers(args: argparse.Namespace) -> dict[str, Any]:
    from p4switch.server.policer import PolicerConfig

    return {
        "packet_in_policer": PolicerConfig(args.cpu_rate, args.cpu_burst).validate(),
        "digest_policer": PolicerConfig(args.digest_rate, args.digest_burst).validate(),
    }


def _start_server(switch: Any, address: str, device_id: int, tls: Any = None,
                  policers: dict[str, Any] | None = None) -> Any:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise SwitchStartError(f"bad --grpc-server-addr {address!r}: expected HOST:PORT")
    # gRPC's C core logs its own copy of bind errors to stderr; the one-line error below is the report.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    try:
        from p4switch.server import P4RuntimeServer
    except ImportError as exc:
        raise SwitchStartError(f"the P4Runtime server is not available: {exc}") from None
    try:
        server = P4RuntimeServer(switch, address=address, device_id=device_id, tls=tls, **(policers or {}))
        server.start()
    except P4SwitchError:
        raise
    except (OSError, RuntimeError) as exc:
        raise SwitchStartError(f"cannot serve P4Runtime on {address}: {exc} (port busy?)") from None
    return server


def main_simple_switch_grpc(argv: Sequence[str] | None = None) -> int:
    """Console script `p4ina-simple-switch-grpc`: `p4ina switch` with simple_switch_grpc's defaults (P4Runtime on
    0.0.0.0:9559 unless `--grpc-server-addr` says otherwise), for scripts that name the switch binary."""
    parser = SwitchArgumentParser(prog=SIMPLE_SWITCH_GRPC_ALIAS, description="simple_switch_grpc's command line, "
                                  "running the embedded p4ina switch (`p4ina switch`).")
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.default_grpc_server_addr = SIMPLE_SWITCH_GRPC_ADDRESS
    try:
        return main(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main_simple_switch_grpc())
