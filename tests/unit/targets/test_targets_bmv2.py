"""The BMv2 target's code path against fake binaries: recorded command lines, readiness, errors, Thrift admin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p4ina.targets import (
    AdminError,
    PortImpairment,
    RunningSwitch,
    SwitchConfig,
    SwitchStartError,
    TargetCompileError,
    TargetUnavailableError,
    get_target,
    resolve_target_name,
)
from p4ina.targets.bmv2 import Bmv2Target
from p4ina.targets.netem import netem_command
from p4ina.targets.process import free_tcp_port


def _config(tmp_path: Path, **overrides: object) -> SwitchConfig:
    options: dict[str, object] = {
        "name": "s1", "ports": {1: "s1-eth1", 2: "s1-eth2"}, "grpc_port": free_tcp_port(),
        "log_file": tmp_path / "s1.log", "device_id": 3, "cpu_port": 255, "thrift_port": 9191,
    }
    options.update(overrides)
    return SwitchConfig(**options)  # type: ignore[arg-type]


def test_command_line_matches_simple_switch_grpc_conventions(tmp_path: Path) -> None:
    config = _config(tmp_path, grpc_port=50077, priority_queues=8, pcap_dir=tmp_path / "pcap")
    assert Bmv2Target().command(config) == [
        "simple_switch_grpc", "--device-id", "3", "--thrift-port", "9191",
        "-i", "1@s1-eth1", "-i", "2@s1-eth2", "--pcap", str(tmp_path / "pcap"),
        "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:50077", "--cpu-port", "255", "--priority-queues", "8",
    ]


def test_command_line_with_json_and_verbose_log(tmp_path: Path) -> None:
    config = _config(tmp_path, grpc_port=9559, cpu_port=None, thrift_port=None, verbose=True,
                     device_config=tmp_path / "prog.json")
    argv = Bmv2Target().command(config)
    assert argv[-4:] == [str(tmp_path / "prog.json"), "--", "--grpc-server-addr", "127.0.0.1:9559"]
    assert "--no-p4" not in argv and "--cpu-port" not in argv
    assert argv[argv.index("--log-console") + 1 : argv.index("--log-console") + 3] == ["-L", "debug"]


def test_cpu_port_zero_is_refused_as_bmv2_does(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="CPU port"):
        Bmv2Target().command(_config(tmp_path, cpu_port=0))


def test_switch_config_rejects_inconsistent_ports(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="also a data port"):
        _config(tmp_path, cpu_port=1)
    with pytest.raises(ValueError, match="not one of its ports"):
        _config(tmp_path, impairments={7: PortImpairment(loss=0.1)})


@pytest.mark.usefixtures("no_bmv2")
def test_missing_binaries_give_install_hint() -> None:
    with pytest.raises(TargetUnavailableError) as info:
        get_target("bmv2")
    message = str(info.value)
    assert "p4c-bm2-ss and simple_switch_grpc" in message
    assert "p4lang" in message and "--target embedded" in message
    assert resolve_target_name("auto") == "embedded"


def test_auto_picks_bmv2_when_both_binaries_exist(fake_bmv2: Any) -> None:
    assert resolve_target_name("auto") == "bmv2"
    assert get_target("auto").name == "bmv2"


def test_compile_runs_p4c_with_p4runtime_files(tmp_path: Path, fake_bmv2: Any) -> None:
    source = tmp_path / "prog.p4"
    source.write_text("control C() { apply { } }\n")
    program = Bmv2Target().compile(source, tmp_path / "out", include_dirs=[tmp_path / "inc"], defines={"K": "4"})
    assert program.p4info.read_text().startswith("pkg_info")
    assert program.device_config_bytes().startswith(b"{")
    (call,) = fake_bmv2.calls("p4c-bm2-ss")
    assert call["argv"] == [
        "--arch", "v1model", "--std", "p4-16", "-o", str(tmp_path / "out" / "prog.json"),
        "--p4runtime-files", str(tmp_path / "out" / "prog.p4info.txt"), "-I", str(tmp_path / "inc"), "-DK=4",
        str(source),
    ]


def test_compile_error_carries_p4c_diagnostic(tmp_path: Path, fake_bmv2: Any) -> None:
    source = tmp_path / "bad.p4"
    source.write_text("syntax_error\n")
    with pytest.raises(TargetCompileError, match=r"bad.p4\(3\).*syntax error"):
        Bmv2Target().compile(source, tmp_path / "out")


def test_compile_notices_missing_output(tmp_path: Path, fake_bmv2: Any,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_P4C_SKIP_P4INFO", "1")
    source = tmp_path / "prog.p4"
    source.write_text("\n")
    with pytest.raises(TargetCompileError, match="did not write"):
        Bmv2Target().compile(source, tmp_path / "out")


def test_start_waits_for_grpc_then_stop_is_idempotent(tmp_path: Path, fake_bmv2: Any) -> None:
    target = Bmv2Target()
    config = _config(tmp_path, thrift_port=None, pid_file=tmp_path / "run" / "s1.pid")
    switch = target.start(config, timeout=20)
    try:
        assert switch.process.alive()
        assert config.pid_file is not None and config.pid_file.read_text().strip() == str(switch.process.pid)
        assert config.thrift_port is not None  # chosen at launch so admin calls can reach the switch
        (call,) = fake_bmv2.calls("simple_switch_grpc")
        assert call["argv"] == target.command(config)[1:]
    finally:
        switch.stop()
    assert not switch.process.alive()
    assert not config.pid_file.exists()
    switch.stop()  # a second stop is harmless
    assert "Server listening" in config.log_file.read_text()


def test_start_failure_reports_log_tail(tmp_path: Path, fake_bmv2: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SWITCH_MODE", "fail")
    with pytest.raises(SwitchStartError) as info:
        Bmv2Target().start(_config(tmp_path), timeout=20)
    message = str(info.value)
    assert "exited with status 1" in message and "No such device" in message and "s1.log" in message


def test_start_timeout_stops_the_process(tmp_path: Path, fake_bmv2: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SWITCH_MODE", "silent")
    config = _config(tmp_path, pid_file=tmp_path / "s1.pid")
    with pytest.raises(SwitchStartError, match="did not answer within 1 s"):
        Bmv2Target().start(config, timeout=1)
    assert config.pid_file is not None and not config.pid_file.exists()  # stopped and forgotten


def _running(tmp_path: Path, fake_bmv2: Any) -> tuple[Bmv2Target, RunningSwitch]:
    target = Bmv2Target()
    switch = target.start(_config(tmp_path), timeout=20)
    return target, switch


def test_thrift_admin_commands(tmp_path: Path, fake_bmv2: Any) -> None:
    target, switch = _running(tmp_path, fake_bmv2)
    try:
        target.set_queue_rate(switch, 1000)
        target.set_queue_rate(switch, 500, port=2, priority=3)
        target.set_queue_depth(switch, 64, port=1)
        assert target.read_register(switch, "MyIngress.r", 5) == 50
        target.write_register(switch, "MyIngress.r", 1, 7)
        with pytest.raises(AdminError, match="Invalid register name"):
            target.read_register(switch, "Nope.r", 0)
        with pytest.raises(AdminError, match="INVALID_INDEX"):
            target.read_register(switch, "MyIngress.r", 99)
        with pytest.raises(AdminError, match="priority needs a port"):
            target.set_queue_rate(switch, 10, priority=1)
    finally:
        switch.stop()
    calls = fake_bmv2.calls("simple_switch_CLI")
    assert [c["stdin"] for c in calls[:5]] == [
        ["set_queue_rate 1000"], ["set_queue_rate 500 2 3"], ["set_queue_depth 64 1"],
        ["register_read MyIngress.r 5"], ["register_write MyIngress.r 1 7"],
    ]
    assert calls[0]["argv"] == ["--thrift-ip", "127.0.0.1", "--thrift-port", "9191"]


def test_thrift_unreachable_is_a_clear_error(tmp_path: Path, fake_bmv2: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    target, switch = _running(tmp_path, fake_bmv2)
    monkeypatch.setenv("FAKE_CLI_MODE", "down")
    try:
        with pytest.raises(AdminError, match="Could not connect to thrift client on port 9191"):
            target.set_queue_depth(switch, 10)
    finally:
        switch.stop()


def test_netem_command_lines() -> None:
    assert netem_command("s1-eth1", PortImpairment(loss=0.02, duplicate=0.01)) == [
        "tc", "qdisc", "replace", "dev", "s1-eth1", "root", "netem", "loss", "2%", "duplicate", "1%"]
    assert netem_command("s1-eth1", PortImpairment(reorder=0.25)) == [
        "tc", "qdisc", "replace", "dev", "s1-eth1", "root", "netem", "delay", "1ms", "reorder", "25%"]
    assert netem_command("s1-eth1", PortImpairment(delay_ms=5, jitter_ms=1)) == [
        "tc", "qdisc", "replace", "dev", "s1-eth1", "root", "netem", "delay", "5ms", "1ms"]
    assert netem_command("s1-eth1", PortImpairment()) == ["tc", "qdisc", "del", "dev", "s1-eth1", "root"]


def test_impairment_validation() -> None:
    with pytest.raises(ValueError, match="fraction"):
        PortImpairment(loss=2)
    with pytest.raises(ValueError, match="direction"):
        PortImpairment(direction="sideways")
