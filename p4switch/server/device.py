"""What the P4Runtime server needs from a switch (`Device`), and `StateDevice`, a control-plane-only device.

The switch engine (`p4switch.switch.core.Switch`) is the real `Device`. `StateDevice` keeps a `RuntimeState` and
nothing else: it answers every P4Runtime call but forwards no packets. It serves P4Runtime conformance tests and
controller development where no data plane is wanted, and is never used by `p4ina switch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from p4.config.v1 import p4info_pb2

from p4switch.exceptions import DeviceConfigError
from p4switch.runtime.state import RuntimeState


@runtime_checkable
class Device(Protocol):
    """The switch as seen by the server (docs/targets.md, `Switch`)."""

    packet_in_sink: Callable[[bytes], None] | None

    @property
    def state(self) -> RuntimeState | None: ...

    @property
    def cpu_port(self) -> int | None: ...

    def install_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> None: ...

    def inject_packet_out(self, frame: bytes) -> None: ...


def runtime_config(p4info: p4info_pb2.P4Info, device_config: bytes) -> dict[str, Any]:
    """The static runtime data of a device config, compiled and checked against `p4info` by the switch's own
    compiler (`p4switch.device_loader`); empty bytes (a P4Info-only push) give an empty config."""
    if not device_config:
        return {}
    from p4switch.device_loader import load

    return load(p4info, device_config).runtime_config


class StateDevice:
    """A device with run-time state and no data plane: packet-outs are counted and dropped."""

    def __init__(self, *, cpu_port: int | None = None) -> None:
        self.state: RuntimeState | None = None
        self.cpu_port = cpu_port
        self.packet_in_sink: Callable[[bytes], None] | None = None
        self.packets_out: list[bytes] = []

    def install_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> None:
        config = runtime_config(p4info, device_config)
        try:
            state = RuntimeState.from_p4info(p4info, config)
        except (KeyError, ValueError, TypeError) as exc:
            raise DeviceConfigError(f"device config does not match the P4Info: {exc}") from None
        self.state = state

    def inject_packet_out(self, frame: bytes) -> None:
        self.packets_out.append(frame)

    def emit_packet_in(self, frame: bytes) -> None:
        """A frame egressing on the CPU port (what the engine does for packet-ins)."""
        if self.packet_in_sink is not None:
            self.packet_in_sink(frame)
