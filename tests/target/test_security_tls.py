"""P4Runtime over mutual TLS with a switch launched through the CLI (`p4ina switch -- --grpc-server-ssl ...`, as
simple_switch_grpc spells it) on loopback: p4runtime-shell (its `--ssl --cacert --cert --private-key` options,
i.e. `SSLOptions`) pushes the pipeline and writes, the controller reads back with its own certificate, and clients
without a certificate, with a certificate of another CA, or in plain text are refused. Certificates come from
`p4ina.pki`, the throwaway CA of `p4ina certs`."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from security_support import PUNT_ALL_P4
from switch_cli_runner import run_switch, switch_command

import p4ina.pki as pki_mod
from controller.client import SwitchClient, tls_credentials
from controller.exceptions import SwitchUnavailableError
from controller.fabric import Fabric
from controller.p4info import P4InfoHelper
from controller.topology import Tls, Topology
from p4switch import compiler


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_tls(address: str, creds: grpc.ChannelCredentials, proc: subprocess.Popen[str], timeout: float = 60
                  ) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the switch exited: {proc.stderr.read() if proc.stderr else ''}")
        with grpc.secure_channel(address, creds) as channel:
            try:
                p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=2)
                return
            except grpc.RpcError:
                time.sleep(0.2)
    raise AssertionError(f"no TLS P4Runtime server on {address} within {timeout} s")


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any, Path, Path]]:
    """A CLI switch serving mutual TLS on loopback; yields (address, pki, p4info path, device config path)."""
    tmp = tmp_path_factory.mktemp("tls")
    pki = pki_mod.make_fabric_pki(tmp / "pki", {"s1": ["127.0.0.1"]}, ["controller", "shell"])
    p4info_path, config_path = compiler.write_outputs(compiler.compile_text(PUNT_ALL_P4, "punt_all"), tmp / "out")
    address = f"127.0.0.1:{_free_port()}"
    server = pki.servers["s1"]
    proc = subprocess.Popen(
        switch_command(["--no-p4", "--cpu-port", "255", "--", "--grpc-server-addr", address, "--grpc-server-ssl",
                        "--grpc-server-cert", str(server.cert), "--grpc-server-key", str(server.key),
                        "--grpc-server-cacert", str(pki.ca_cert), "--grpc-server-with-client-auth"]),
        cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        client = pki.clients["controller"]
        _wait_for_tls(address, tls_credentials(str(pki.ca_cert), str(client.cert), str(client.key)), proc)
        yield address, pki, Path(p4info_path), Path(config_path)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_shell_and_controller_connect_with_certificates(fabric: tuple[str, Any, Path, Path]) -> None:
    import p4runtime_sh.shell as sh
    from p4runtime_sh.p4runtime import SSLOptions

    address, pki, p4info_path, config_path = fabric
    shell_cred = pki.clients["shell"]
    sh.setup(device_id=0, grpc_addr=address, election_id=(0, 5), verbose=False,
             config=sh.FwdPipeConfig(str(p4info_path), str(config_path)),
             ssl_options=SSLOptions(False, str(pki.ca_cert), str(shell_cred.cert), str(shell_cred.key)))
    try:
        entry = sh.TableEntry("I.fwd")(action="I.to_port")
        entry.match["h.eth.dst"] = "02:00:00:00:00:07"
        entry.action["port"] = "3"
        entry.insert()
        assert len(list(sh.TableEntry("I.fwd").read())) == 1
    finally:
        sh.teardown()
    cred = pki.clients["controller"]
    creds = tls_credentials(str(pki.ca_cert), str(cred.cert), str(cred.key))
    with SwitchClient("s1", address, election_id=(0, 9), timeout=10, credentials=creds) as ctl:
        assert ctl.is_primary
        helper = P4InfoHelper(ctl.get_pipeline().p4info)
        entries = ctl.read_table("I.fwd")
        assert len(entries) == 1
        assert entries[0].action.action.action_id == helper.action_id("I.to_port")
    # the controller as a fabric: the topology's tls section, as `p4ina ctl` reads it from the topology file
    topo = Topology(tls=Tls(ca=str(pki.ca_cert), cert=str(cred.cert), key=str(cred.key)))
    topo.add_switch("s1", grpc=address, cpu_port=255)
    with Fabric(topo, timeout=10) as controllers:
        result = controllers.run(lambda c: len(c.read_table("I.fwd")))
        assert result.errors == {} and result.results == {"s1": 1}
    topo.tls = Tls(ca=str(pki.ca_cert))  # no client certificate: this fabric cannot reach the switch
    with Fabric(topo, timeout=3) as controllers:
        result = controllers.run(lambda c: len(c.read_table("I.fwd")))
        assert list(result.errors) == ["s1"] and isinstance(result.errors["s1"], SwitchUnavailableError)


def test_clients_without_a_valid_certificate_are_refused(fabric: tuple[str, Any, Path, Path],
                                                          tmp_path: Path) -> None:
    address, pki, _, _ = fabric
    ca = str(pki.ca_cert)
    with pytest.raises(SwitchUnavailableError):  # plain text to a TLS port
        SwitchClient("s1", address, timeout=3).connect()
    with pytest.raises(SwitchUnavailableError):  # TLS, but no client certificate
        SwitchClient("s1", address, timeout=3, credentials=tls_credentials(ca)).connect()
    rogue = pki_mod.make_fabric_pki(tmp_path / "rogue", {"x": []}, ["mallory"])
    mallory = rogue.clients["mallory"]
    with pytest.raises(SwitchUnavailableError):  # a certificate from another CA
        SwitchClient("s1", address, timeout=3,
                     credentials=tls_credentials(ca, str(mallory.cert), str(mallory.key))).connect()
    # a raw gRPC client is refused at the handshake: UNAVAILABLE, no RPC reaches the service
    with grpc.secure_channel(address, grpc.ssl_channel_credentials(pki.ca_cert.read_bytes())) as channel:
        with pytest.raises(grpc.RpcError) as info:
            p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=5)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize("flags, message", [
    (["--grpc-server-ssl"], "needs --grpc-server-cert and --grpc-server-key"),
    (["--grpc-server-ssl", "--grpc-server-cert", "nope.pem", "--grpc-server-key", "nope.key"],
     "cannot read TLS file nope.pem"),
    (["--grpc-server-ssl", "--grpc-server-cert", "a", "--grpc-server-key", "b", "--grpc-server-with-client-auth"],
     "--grpc-server-with-client-auth needs --grpc-server-cacert"),
    (["--grpc-server-ssl", "--grpc-server-cert", "a.pem", "--grpc-server-key", "b", "--grpc-client-ca", "c",
      "--grpc-server-with-client-auth"], "cannot read TLS file a.pem"),  # --grpc-client-ca: --grpc-server-cacert
    (["--cpu-rate", "-5"], "not a rate"),
])
def test_bad_tls_and_policer_flags_are_one_line_errors(tmp_path: Path, flags: list[str], message: str) -> None:
    result = run_switch(["--no-p4", "--grpc-server-addr", f"127.0.0.1:{_free_port()}", *flags], cwd=tmp_path,
                        timeout=60)
    assert result.returncode in (1, 2)
    assert message in result.stderr
    assert "Traceback" not in result.stderr
