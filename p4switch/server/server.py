"""`P4RuntimeServer`: a grpc server carrying the P4Runtime service and the admin service for one device."""

from __future__ import annotations

import errno
import socket
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from p4.v1 import p4runtime_pb2_grpc

from p4switch.exceptions import SwitchStartError
from p4switch.server.admin import AdminService, generic_handler
from p4switch.server.arbitration import MAX_STREAMS
from p4switch.server.device import Device
from p4switch.server.policer import PolicerConfig
from p4switch.server.service import P4RuntimeService

DEFAULT_ADDRESS = "0.0.0.0:9559"


@dataclass(frozen=True)
class TlsOptions:
    """Server certificate and key (PEM files); with `client_ca`, clients must present a certificate it signed."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        try:
            cert, key = self.cert.read_bytes(), self.key.read_bytes()
            ca = self.client_ca.read_bytes() if self.client_ca is not None else None
        except OSError as exc:
            raise SwitchStartError(f"cannot read TLS file {exc.filename}: {exc.strerror}") from None
        return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=ca is not None)


class P4RuntimeServer:
    """Serve `device` over P4Runtime at `address` (`host:port`; port 0 picks a free port, see `.port`)."""

    def __init__(self, device: Device, *, address: str = DEFAULT_ADDRESS, device_id: int = 0,
                 tls: TlsOptions | None = None, max_workers: int = MAX_STREAMS + 16,
                 packet_in_policer: PolicerConfig | None = None, digest_policer: PolicerConfig | None = None) -> None:
        # every open StreamChannel holds a worker thread: room for PI's 16 streams plus unary calls.
        # The policers cap packet-ins and digest lists to the controller (None: no cap; see policer.py).
        self.device = device
        self.address = address
        self.device_id = device_id
        self.tls = tls
        self.service = P4RuntimeService(device, device_id, packet_in_policer=packet_in_policer,
                                        digest_policer=digest_policer)
        self.admin = AdminService(device, self.stats, policers=self.service.policers)
        self._max_workers = max_workers
        self._server: grpc.Server | None = None
        self.port = 0

    def start(self) -> P4RuntimeServer:
        _check_free(self.address)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=self._max_workers, thread_name_prefix="p4rt"),
                             options=[("grpc.so_reuseport", 0),
                                      ("grpc.max_receive_message_length", 64 << 20),
                                      ("grpc.max_send_message_length", 64 << 20)])
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(self.service, server)
        server.add_generic_rpc_handlers((generic_handler(self.admin),))
        try:
            if self.tls is not None:
                port = server.add_secure_port(self.address, self.tls.credentials())
            else:
                port = server.add_insecure_port(self.address)
        except RuntimeError as exc:
            raise SwitchStartError(f"cannot listen on {self.address}: {exc}") from None
        if port == 0:
            raise SwitchStartError(f"cannot listen on {self.address} (address in use or invalid)")
        self.port = port
        server.start()
        self._server = server
        return self

    def stop(self, grace: float | None = 0.5) -> None:
        """Idempotent: close the streams, then stop serving."""
        self.service.close()
        if self._server is not None:
            self._server.stop(grace).wait()
            self._server = None

    def wait(self) -> None:
        if self._server is not None:
            self._server.wait_for_termination()

    def stats(self) -> dict[str, Any]:
        streams = self.service.arbitrator.streams()
        primary = self.service.arbitrator.primary("")
        return {
            "streams": len(streams),
            "primary_election_id": primary.election_id if primary is not None else None,
            "pipeline": self.service.config is not None,
            **self.service.counters,
            "policers": {name: bucket.snapshot() for name, bucket in self.service.policers.items()},
        }

    def __enter__(self) -> P4RuntimeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _check_free(address: str) -> None:
    """Refuse a busy or unusable address with one line, before grpc's C core logs its own error to stderr."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit():
        raise SwitchStartError(f"bad address {address!r}: expected HOST:PORT")
    port = int(port_text)
    if port == 0:
        return
    host = host.strip("[]") or "0.0.0.0"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise SwitchStartError(f"cannot listen on {address}: {exc.strerror}") from None
    family, kind, proto, _, sockaddr = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpc does: TIME_WAIT is no obstacle
        try:
            probe.bind(sockaddr)
        except OSError as exc:
            reason = "address in use" if exc.errno == errno.EADDRINUSE else exc.strerror
            raise SwitchStartError(f"cannot listen on {address}: {reason}") from None
