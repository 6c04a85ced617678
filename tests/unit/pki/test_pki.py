"""The throwaway PKI is usable by gRPC as it is: mutual TLS succeeds with its certificates and fails without."""

from __future__ import annotations

import socket
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from cryptography import x509

from p4ina.pki import make_fabric_pki

METHOD = "/p4ina.test.Echo/Echo"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def tls_server(tmp_path: Path):
    pki = make_fabric_pki(tmp_path, {"s1": ["10.9.9.9"]}, ["controller"])
    handler = grpc.method_handlers_generic_handler(
        "p4ina.test.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(lambda req, ctx: req)})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    creds = grpc.ssl_server_credentials(
        [(pki.servers["s1"].key.read_bytes(), pki.servers["s1"].cert.read_bytes())],
        root_certificates=pki.ca_cert.read_bytes(), require_client_auth=True)
    port = _free_port()
    server.add_secure_port(f"127.0.0.1:{port}", creds)
    server.start()
    yield pki, port
    server.stop(0)


def _call(port: int, creds: grpc.ChannelCredentials) -> bytes:
    with grpc.secure_channel(f"127.0.0.1:{port}", creds) as channel:
        echo = channel.unary_unary(METHOD)
        return bytes(echo(b"ping", timeout=5))


def test_mutual_tls_with_the_fabric_certificates(tls_server) -> None:
    pki, port = tls_server
    client = pki.clients["controller"]
    creds = grpc.ssl_channel_credentials(pki.ca_cert.read_bytes(), client.key.read_bytes(), client.cert.read_bytes())
    assert _call(port, creds) == b"ping"


def test_a_client_without_a_certificate_is_refused(tls_server) -> None:
    pki, port = tls_server
    with pytest.raises(grpc.RpcError) as err:
        _call(port, grpc.ssl_channel_credentials(pki.ca_cert.read_bytes()))
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_client_that_does_not_trust_the_ca_is_refused(tls_server, tmp_path: Path) -> None:
    _, port = tls_server
    other = make_fabric_pki(tmp_path / "other", {"x": []}, ["controller"])
    client = other.clients["controller"]
    creds = grpc.ssl_channel_credentials(other.ca_cert.read_bytes(), client.key.read_bytes(),
                                         client.cert.read_bytes())
    with pytest.raises(grpc.RpcError):
        _call(port, creds)


def test_server_certificate_names_and_key_permissions(tmp_path: Path) -> None:
    pki = make_fabric_pki(tmp_path, {"leaf1": ["10.0.0.1", "leaf1.fabric"]})
    cert = x509.load_pem_x509_certificate(pki.servers["leaf1"].cert.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "leaf1.fabric" in san.get_values_for_type(x509.DNSName)
    assert {str(a) for a in san.get_values_for_type(x509.IPAddress)} >= {"10.0.0.1", "127.0.0.1"}
    assert pki.servers["leaf1"].key.stat().st_mode & 0o077 == 0


def test_a_name_cannot_be_switch_and_client(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="both a switch and a client"):
        make_fabric_pki(tmp_path, {"c": []}, ["c"])
