"""`p4ina switch` / `p4ina-simple-switch-grpc` with the command lines BMv2 users write: the P4 tutorials'
`utils/p4runtime_switch.py` (options before and after `--`, `--thrift-port`, `--nanolog`), their `runptf.sh`
(`--log-file`, `--log-flush`, `--dump-packet-data`), BMv2's `-L` levels. The option names and their meaning come
from BMv2's `src/bm_sim/options_parse.cpp` and simple_switch_grpc's target parser; in-process tests stop at the
parsed options (the live switch is replaced), subprocess tests run the real command on loopback."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4switch import switch_cli

PROGRAM = Path(__file__).resolve().parents[2] / "integration" / "tutorial" / "ipv4_fwd.p4"


@pytest.fixture
def live_args(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """Replace the live switch: record the options it would have started with."""
    seen: list[argparse.Namespace] = []

    def fake_live(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(switch_cli, "_run_live", fake_live)
    return seen


def run_alias(argv: list[str]) -> int:
    return switch_cli.main_simple_switch_grpc(argv)


def run_p4ina_switch(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="p4ina")
    switch_cli.register(parser.add_subparsers())
    args = parser.parse_args(["switch", *argv])
    return int(args.handler(args))


def test_tutorial_p4runtime_switch_command_line(live_args: list[argparse.Namespace],
                                                caplog: pytest.LogCaptureFixture) -> None:
    """The argv p4runtime_switch.py builds: JSON and --log-console between options, then `-- --grpc-server-addr`
    followed by `--cpu-port` (appended after the `--`)."""
    argv = ("-i 1@s1-eth1 -i 2@s1-eth2 --pcap /tmp/pcaps --nanolog ipc:///tmp/bm-0-log.ipc --device-id 0 "
            "build/basic.json --log-console --thrift-port 9090 -- --grpc-server-addr 0.0.0.0:50051 --cpu-port 255 "
            "--priority-queues 2").split()
    with caplog.at_level(logging.WARNING):
        assert run_alias(argv) == 0
    args = live_args[0]
    assert args.device_config == "build/basic.json"
    assert args.interface == ["1@s1-eth1", "2@s1-eth2"]
    assert args.pcap == "/tmp/pcaps"
    assert (args.grpc_server_addr, args.cpu_port, args.priority_queues, args.device_id) == ("0.0.0.0:50051", 255, 2, 0)
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert "--thrift-port" in warnings and "--nanolog" in warnings


def test_the_alias_serves_on_9559_by_default_and_p4ina_switch_does_not(live_args: list[argparse.Namespace]) -> None:
    assert run_alias(["--no-p4", "-i", "0@veth0"]) == 0
    assert live_args[-1].grpc_server_addr == "0.0.0.0:9559"  # simple_switch_grpc's default
    assert run_alias(["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:50001"]) == 0
    assert live_args[-1].grpc_server_addr == "127.0.0.1:50001"
    assert run_p4ina_switch(["--no-p4"]) == 0
    assert live_args[-1].grpc_server_addr is None


def test_runptf_command_line(live_args: list[argparse.Namespace], caplog: pytest.LogCaptureFixture,
                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # --log-file ss-log opens ss-log.txt here
    argv = "--log-file ss-log --log-flush --dump-packet-data 10000 -i 0@veth0 -i 1@veth2 --no-p4".split()
    with caplog.at_level(logging.WARNING):
        assert run_alias(argv) == 0
    args = live_args[0]
    assert args.no_p4 and args.log_file == "ss-log" and args.log_flush
    assert "--dump-packet-data" in " ".join(r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("level", ["trace", "debug", "info", "warn", "error", "off"])
def test_bmv2_log_levels(live_args: list[argparse.Namespace], level: str) -> None:
    assert run_p4ina_switch(["--no-p4", "-L", level]) == 0
    assert live_args[-1].log_level == level
    assert level in switch_cli.LOG_LEVELS


def test_bad_log_level_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        run_alias(["--no-p4", "-L", "verbose"])
    assert exc.value.code == 2


@pytest.mark.parametrize(("argv", "words"), [
    (["--no-p4", "--log-console", "--log-file", "x"], "exclusive"),
    (["--no-p4", "--", "--drop-port", "100"], "511"),
    (["--no-p4", "--", "--load-modules", "x.so"], "unknown target option"),
    (["--no-p4", "--", "--cpu-port", "abc"], "bad target option"),
])
def test_refused_forms_are_one_line_errors(live_args: list[argparse.Namespace], capsys: pytest.CaptureFixture[str],
                                           argv: list[str], words: str) -> None:
    assert run_alias(argv) == 1
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert live_args == []


def test_drop_port_511_and_enable_swap_are_accepted(live_args: list[argparse.Namespace]) -> None:
    assert run_alias(["--no-p4", "--", "--drop-port", "511", "--enable-swap"]) == 0
    assert live_args[0].no_p4


# ----------------------------------------------------------------------------------------------- real process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def compile_tutorial_style(out: Path) -> Path:
    """Build as the tutorials' Makefile does: build/X.json plus build/X.p4.p4info.txtpb."""
    code = "import sys; from p4switch.compile_cli import main_p4c_bm2_ss; sys.exit(main_p4c_bm2_ss(sys.argv[1:]))"
    result = subprocess.run([sys.executable, "-c", code, "--p4v", "16", "--p4runtime-files",
                             str(out / "ipv4_fwd.p4.p4info.txtpb"), "-o", str(out / "ipv4_fwd.json"), str(PROGRAM)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return out / "ipv4_fwd.json"


def start_alias(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    code = "import sys; from p4switch.switch_cli import main_simple_switch_grpc; sys.exit(main_simple_switch_grpc())"
    return subprocess.Popen([sys.executable, "-c", code, *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def wait_serving(address: str, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"switch exited: {proc.stdout.read() if proc.stdout else ''}")
        with grpc.insecure_channel(address) as ch:
            try:
                p4runtime_pb2_grpc.P4RuntimeStub(ch).Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=2)
                return
            except grpc.RpcError:
                time.sleep(0.2)
    raise AssertionError("switch did not serve P4Runtime in time")


def stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    return out


def test_started_with_a_tutorial_build_serves_its_p4info_under_its_device_id(tmp_path: Path) -> None:
    config = compile_tutorial_style(tmp_path / "build")
    port = free_port()
    proc = start_alias(["--nanolog", "ipc:///tmp/bm-2-log.ipc", "--device-id", "2", str(config), "--log-console",
                        "--thrift-port", "9092", "--", "--grpc-server-addr", f"127.0.0.1:{port}", "--cpu-port", "255"],
                       cwd=tmp_path)
    try:
        wait_serving(f"127.0.0.1:{port}", proc)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
            got = stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=2),
                                                   timeout=10)
        assert "FwdIngress.routes" in [t.preamble.name for t in got.config.p4info.tables]
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out
    assert "--thrift-port" in out and "ignored" in out


def test_log_file_gets_bmv2s_txt_suffix(tmp_path: Path) -> None:
    port = free_port()
    proc = start_alias(["--log-file", "ss-log", "--log-flush", "-L", "info", "--no-p4", "--", "--grpc-server-addr",
                        f"127.0.0.1:{port}"], cwd=tmp_path)
    try:
        wait_serving(f"127.0.0.1:{port}", proc)
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out
    assert (tmp_path / "ss-log.txt").exists()
    assert not (tmp_path / "ss-log").exists()


def test_a_config_without_any_p4info_nearby_names_the_flag(tmp_path: Path) -> None:
    config = compile_tutorial_style(tmp_path)
    (tmp_path / "ipv4_fwd.p4.p4info.txtpb").unlink()
    proc = start_alias([str(config), "--", "--grpc-server-addr", f"127.0.0.1:{free_port()}"], cwd=tmp_path)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "--p4info" in out and "Traceback" not in out


def test_p4info_candidates_order() -> None:
    from p4switch.p4info_files import p4info_candidates

    names = [p.name for p in p4info_candidates(Path("b/x.json"))]
    assert names[:3] == ["x.p4info.txtpb", "x.p4.p4info.txtpb", "x.p4.p4info.txt"]
    assert "x.p4info.json" in names and "x.p4.p4info" in names and len(names) == len(set(names))
