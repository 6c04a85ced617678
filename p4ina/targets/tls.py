"""TLS for a switch's P4Runtime port: the server files a target passes to its switch (the `simple_switch_grpc`
flags, which `p4ina switch` shares) and the client files the launcher itself uses to reach that port (readiness
probe, admin calls). Why one place: with mutual TLS every channel to the switch, also our own, needs a client
certificate, and a plain-text probe would only ever see a failed handshake."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SwitchTls:
    """PEM files: the switch's certificate and key, the CA that clients must be signed by (and that signed the
    switch), and a client certificate and key of that CA for the launcher's own channels."""

    cert: Path
    key: Path
    ca: Path
    client_cert: Path
    client_key: Path

    def server_flags(self) -> list[str]:
        """`--grpc-server-*` flags for mutual TLS, as simple_switch_grpc spells them."""
        return ["--grpc-server-ssl", "--grpc-server-cert", str(self.cert), "--grpc-server-key", str(self.key),
                "--grpc-server-with-client-auth", "--grpc-server-cacert", str(self.ca)]

    def channel_credentials(self) -> Any:
        import grpc

        return grpc.ssl_channel_credentials(root_certificates=self.ca.read_bytes(),
                                            private_key=self.client_key.read_bytes(),
                                            certificate_chain=self.client_cert.read_bytes())


def open_channel(address: str, tls: SwitchTls | None) -> Any:
    """A gRPC channel to a switch's P4Runtime port: plain text, or mutual TLS with the launcher's certificate."""
    import grpc

    from controller.client import CHANNEL_OPTIONS

    if tls is None:
        return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
    return grpc.secure_channel(address, tls.channel_credentials(), options=CHANNEL_OPTIONS)
