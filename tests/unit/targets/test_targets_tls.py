"""TLS for launched switches: both targets pass simple_switch_grpc's mutual-TLS flags, and the embedded switch the
target starts serves them, so that the readiness probe and admin calls (which present the launcher's client
certificate) succeed while a plain-text client is refused."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from p4ina.pki import make_fabric_pki
from p4ina.targets import SwitchConfig, SwitchTls
from p4ina.targets.bmv2 import Bmv2Target
from p4ina.targets.embedded import EmbeddedTarget
from p4ina.targets.process import free_tcp_port

TLS_FLAGS = ["--grpc-server-ssl", "--grpc-server-cert", "/p/s1.pem", "--grpc-server-key", "/p/s1.key",
             "--grpc-server-with-client-auth", "--grpc-server-cacert", "/p/ca.pem"]


def _files() -> SwitchTls:
    return SwitchTls(cert=Path("/p/s1.pem"), key=Path("/p/s1.key"), ca=Path("/p/ca.pem"),
                     client_cert=Path("/p/launcher.pem"), client_key=Path("/p/launcher.key"))


def test_embedded_command_serves_mutual_tls(tmp_path: Path) -> None:
    config = SwitchConfig(name="s1", ports={1: "s1-eth1"}, grpc_port=50001, log_file=tmp_path / "s.log", tls=_files())
    argv = EmbeddedTarget().command(config)
    start = argv.index("--grpc-server-ssl")
    assert argv[start:start + len(TLS_FLAGS)] == TLS_FLAGS
    assert argv[-1] == "--no-p4"
    assert "--grpc-server-ssl" not in EmbeddedTarget().command(
        SwitchConfig(name="s1", ports={}, grpc_port=50001, log_file=tmp_path / "s.log"))


def test_bmv2_command_passes_tls_as_target_options(tmp_path: Path) -> None:
    config = SwitchConfig(name="s1", ports={1: "s1-eth1"}, grpc_port=50001, log_file=tmp_path / "s.log",
                          thrift_port=9090, tls=_files())
    argv = Bmv2Target().command(config)
    target_options = argv[argv.index("--") + 1:]
    assert target_options == ["--grpc-server-addr", "127.0.0.1:50001", *TLS_FLAGS]


def test_started_switch_serves_tls_to_the_launcher_only(tmp_path: Path) -> None:
    pki = make_fabric_pki(tmp_path / "pki", {"s1": ["127.0.0.1"]}, clients=("launcher",))
    tls = SwitchTls(cert=pki.servers["s1"].cert, key=pki.servers["s1"].key, ca=pki.ca_cert,
                    client_cert=pki.clients["launcher"].cert, client_key=pki.clients["launcher"].key)
    target = EmbeddedTarget()
    config = SwitchConfig(name="s1", ports={}, grpc_port=free_tcp_port(), log_file=tmp_path / "s1.log", tls=tls)
    switch = target.start(config, timeout=60.0)  # the readiness probe must pass over mutual TLS
    try:
        assert "server" in target.admin(switch, "stats", {})
        from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

        plain = grpc.insecure_channel(switch.grpc_address)
        try:
            with pytest.raises(grpc.RpcError) as refused:
                p4runtime_pb2_grpc.P4RuntimeStub(plain).Capabilities(p4runtime_pb2.CapabilitiesRequest(),
                                                                     timeout=5)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            plain.close()
    finally:
        switch.stop()
