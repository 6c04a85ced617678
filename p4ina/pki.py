"""A throwaway certificate authority for one fabric run: a CA, a server certificate per switch (for its P4Runtime
port) and client certificates for controllers and shells.

Why: P4Runtime carries the power to reprogram a switch, so a fabric run should not leave it open on a plain-text
port. Real deployments bring their own PKI; for emulated runs and tests this makes one in milliseconds, with the
names and addresses the switches are reached by as subject alternative names, so that gRPC's hostname check passes
without being switched off.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DEFAULT_SANS = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class Credential:
    """PEM files of one identity."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class FabricPki:
    ca_cert: Path
    servers: dict[str, Credential]
    clients: dict[str, Credential]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "p4ina fabric"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(names: Iterable[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for n in dict.fromkeys(names):  # keep order, drop repeats
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            entries.append(x509.DNSName(n))
    return x509.SubjectAlternativeName(entries)


def _write(path: Path, data: bytes, *, private: bool) -> Path:
    path.write_bytes(data)
    if private:
        path.chmod(0o600)
    return path


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_fabric_pki(out_dir: Path, switches: Mapping[str, Iterable[str]], clients: Iterable[str] = ("controller",),
                    *, days: int = 7) -> FabricPki:
    """Write `ca.pem`, `<switch>.pem`/`<switch>.key` (server certificates whose SANs are the given names/addresses
    plus localhost) and `<client>.pem`/`<client>.key` (client certificates) into `out_dir`."""
    clients = list(clients)
    overlap = set(switches) & set(clients)
    if overlap:
        raise ValueError(f"a name cannot be both a switch and a client: {', '.join(sorted(overlap))}")
    out_dir.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)  # tolerate small clock skew between namespaces
    until = now + dt.timedelta(days=days)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("p4ina fabric CA")).issuer_name(_name("p4ina fabric CA"))
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = _write(out_dir / "ca.pem", ca_cert.public_bytes(serialization.Encoding.PEM), private=False)
    _write(out_dir / "ca.key", _key_pem(ca_key), private=True)

    def issue(common_name: str, usage: x509.ObjectIdentifier, sans: Iterable[str]) -> Credential:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name)).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(until)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(_san([common_name, *sans]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        return Credential(
            _write(out_dir / f"{common_name}.pem", cert.public_bytes(serialization.Encoding.PEM), private=False),
            _write(out_dir / f"{common_name}.key", _key_pem(key), private=True),
        )

    servers = {name: issue(name, ExtendedKeyUsageOID.SERVER_AUTH, [*addrs, *DEFAULT_SANS])
               for name, addrs in switches.items()}
    client_creds = {name: issue(name, ExtendedKeyUsageOID.CLIENT_AUTH, []) for name in clients}
    return FabricPki(ca_path, servers, client_creds)
