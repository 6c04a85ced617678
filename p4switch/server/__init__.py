"""The embedded switch's P4Runtime server (grpcio + the `p4runtime` protos) and its small JSON admin service.

`P4RuntimeServer(device, address=..., device_id=...)` serves one `Device` (the switch engine, or the control-plane
only `StateDevice`): Capabilities, Set/GetForwardingPipelineConfig, Write, Read and StreamChannel with mastership
arbitration, packet-in/out and digests, answering with simple_switch_grpc's status codes.
"""

from __future__ import annotations

from p4switch.server.device import Device, StateDevice
from p4switch.server.server import P4RuntimeServer, TlsOptions

__all__ = ["Device", "P4RuntimeServer", "StateDevice", "TlsOptions"]
