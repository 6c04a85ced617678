"""The embedded target's command line and impairment flags (the live switch is exercised in tests/target/)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from p4ina.targets import PortImpairment, SwitchConfig, UnsupportedOperationError, get_target
from p4ina.targets.embedded import EmbeddedTarget, impair_flag, impairment_seed


def test_embedded_is_always_available() -> None:
    assert get_target("embedded").missing() == []


def test_command_line_uses_simple_switch_flags(tmp_path: Path) -> None:
    config = SwitchConfig(name="leaf1", ports={2: "leaf1-eth2", 1: "leaf1-eth1"}, grpc_port=50001,
                          log_file=tmp_path / "l.log", device_id=4, cpu_port=255, priority_queues=8,
                          pcap_dir=tmp_path / "pcap", verbose=True,
                          impairments={1: PortImpairment(loss=0.02, duplicate=0.01, direction="both")})
    argv = EmbeddedTarget().command(config)
    assert argv[:4] == [sys.executable, "-m", "p4ina", "switch"]
    seed = impairment_seed("leaf1", 1, config.impairments[1])
    assert argv[4:] == [
        "--device-id", "4", "--grpc-server-addr", "127.0.0.1:50001", "-i", "1@leaf1-eth1", "-i", "2@leaf1-eth2",
        "--cpu-port", "255", "--priority-queues", "8", "--pcap", str(tmp_path / "pcap"),
        "--log-console", "--log-level", "debug", "--impair", f"1:both:loss=0.02,dup=0.01,seed={seed}", "--no-p4",
    ]


def test_command_line_with_device_config(tmp_path: Path) -> None:
    config = SwitchConfig(name="s1", ports={}, grpc_port=1, log_file=tmp_path / "s.log",
                          device_config=tmp_path / "p.json")
    assert EmbeddedTarget().command(config)[-1] == str(tmp_path / "p.json")


def test_impair_flags_seeds_differ_per_port_and_are_stable() -> None:
    imp = PortImpairment(loss=0.1, delay_ms=2, jitter_ms=0.5, reorder=0.01)
    assert impair_flag("s1", 1, imp).startswith("1:out:loss=0.1,reorder=0.01,delay_ms=2,jitter_ms=0.5,seed=")
    assert impairment_seed("s1", 1, imp) == impairment_seed("s1", 1, imp)
    assert impairment_seed("s1", 1, imp) != impairment_seed("s1", 2, imp)
    assert impairment_seed("s1", 1, imp) != impairment_seed("s1", 1, PortImpairment(loss=0.1, seed=5))
    with pytest.raises(UnsupportedOperationError, match="bitflip"):
        impair_flag("s1", 1, PortImpairment(corrupt=0.1))


def test_compile_writes_p4info_and_device_config(tmp_path: Path) -> None:
    source = tmp_path / "fwd.p4"
    source.write_text(FORWARD_P4)
    program = EmbeddedTarget().compile(source, tmp_path / "out")
    assert program.target == "embedded"
    assert 'name: "I.fwd"' in program.p4info_text()
    assert program.device_config_bytes().startswith(b"{")


def test_compile_error_is_a_diagnostic(tmp_path: Path) -> None:
    from p4ina.targets import TargetCompileError

    source = tmp_path / "bad.p4"
    source.write_text(FORWARD_P4.replace("apply { fwd.apply(); }", "apply { nosuch.apply(); }"))
    with pytest.raises(TargetCompileError, match=r"bad\.p4:\d+:\d+: error"):
        EmbeddedTarget().compile(source, tmp_path / "out")


FORWARD_P4 = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct H { eth_t eth; }
struct M { }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t sm) {
    state start { p.extract(h.eth); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table fwd { key = { sm.ingress_port: exact; } actions = { to; NoAction; } default_action = NoAction(); }
    apply { fwd.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
