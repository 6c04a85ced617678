"""The controller's view of live switches: one `SwitchClient` each, operations fanned out over a thread pool.

`Fabric.run(fn, switches)` calls `fn(client)` on every switch concurrently and returns per-switch results and
errors, so one dead switch costs one timeout, not one per switch in sequence, and never hides the others' results.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from p4.config.v1 import p4info_pb2

from controller.client import StreamEvent, SwitchClient, fresh_election_id, tls_credentials
from controller.exceptions import ControllerError, SwitchUnavailableError, TopologyError
from controller.topology import Topology

T = TypeVar("T")


@dataclass
class FanOut(Generic[T]):
    """Per-switch outcome of a fanned-out operation."""

    results: dict[str, T] = field(default_factory=dict)
    errors: dict[str, ControllerError] = field(default_factory=dict)

    def raise_first(self) -> None:
        if self.errors:
            name = sorted(self.errors)[0]
            more = f" (and {len(self.errors) - 1} more switches)" if len(self.errors) > 1 else ""
            raise _with_suffix(self.errors[name], more)


def _with_suffix(err: ControllerError, suffix: str) -> ControllerError:
    if suffix:
        err.args = (f"{err.args[0]}{suffix}", *err.args[1:])
    return err


class Fabric:
    """Clients for every switch of a topology, sharing one election id (one controller, many switches)."""

    def __init__(self, topo: Topology, *, timeout: float = 5.0, election_id: tuple[int, int] | None = None,
                 on_event: Callable[[StreamEvent], None] | None = None, max_workers: int = 16) -> None:
        self.topo = topo
        self.timeout = timeout
        self.election_id = election_id or fresh_election_id()
        self.on_event = on_event
        self.clients: dict[str, SwitchClient] = {}
        self._lock = threading.Lock()
        tls = topo.tls
        self._credentials = tls_credentials(tls.ca, tls.cert, tls.key) if tls is not None else None
        self._server_name = tls.server_name if tls is not None else ""
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="p4ina-ctl")

    def client(self, switch: str) -> SwitchClient:
        """The (possibly not yet connected) client of one switch."""
        with self._lock:
            if switch not in self.clients:
                if switch not in self.topo.switches:
                    raise TopologyError(f"unknown switch {switch!r}")
                sw = self.topo.switches[switch]
                if not sw.grpc:
                    raise TopologyError(f"switch {switch} has no gRPC address in the topology")
                self.clients[switch] = SwitchClient(switch, sw.grpc, sw.device_id, election_id=self.election_id,
                                                    timeout=self.timeout, on_event=self.on_event,
                                                    credentials=self._credentials, server_name=self._server_name)
            return self.clients[switch]

    def connected(self, switch: str) -> SwitchClient:
        """The client of a switch, connected and primary (connecting on first use)."""
        c = self.client(switch)
        if not c.connected or not c.is_primary:
            c.connect()
        return c

    def run(self, fn: Callable[[SwitchClient], T], switches: Iterable[str] | None = None, *,
            connect: bool = True) -> FanOut[T]:
        """`fn(client)` on every switch at once; with `connect=False` clients are used as they are (a health
        check must not re-arbitrate)."""
        names = sorted(switches if switches is not None else self.topo.switches)
        out: FanOut[T] = FanOut()

        def one(name: str) -> T:
            return fn(self.connected(name) if connect else self.client(name))

        futures = {name: self._pool.submit(one, name) for name in names}
        for name, fut in futures.items():
            try:
                out.results[name] = fut.result()
            except ControllerError as exc:
                out.errors[name] = exc
            except Exception as exc:  # an unexpected bug on one switch must still report the others
                out.errors[name] = SwitchUnavailableError(name, f"{type(exc).__name__}: {exc}")
        return out

    def push_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes,
                      switches: Iterable[str] | None = None) -> FanOut[None]:
        # Pure-Python protobuf messages are not safe to read from several threads at once (a read may fill in
        # lazily created fields while another thread copies): serialise once, give each switch its own copy.
        blob = p4info.SerializeToString()

        def push(client: SwitchClient) -> None:
            own = p4info_pb2.P4Info()
            own.ParseFromString(blob)
            client.set_pipeline(own, device_config)

        return self.run(push, switches)

    def close(self) -> None:
        for c in list(self.clients.values()):
            c.close()
        self.clients.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Fabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
