"""p4ina host agent: reliable, quantized all-reduce through aggregation switches, baselines and a PyTorch hook.

The main names are importable from the package (`from hostagent import Worker`); they load on first use, so that
`import hostagent` stays cheap for tools that only need the protocol. See docs/hostagent.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Worker": "hostagent.worker",
    "WorkerStats": "hostagent.worker",
    "Endpoints": "hostagent.codec",
    "UdpTransport": "hostagent.transport",
    "PacketSocketTransport": "hostagent.transport",
    "SwitchPorts": "hostagent.transport",
    "FrameTunnel": "hostagent.tunnel",
    "TunnelTransport": "hostagent.tunnel",
    "RingAllReduce": "hostagent.ring",
    "GlooAllReduce": "hostagent.gloo",
    "AdaptiveAllReduce": "hostagent.adaptive",
    "HostAgentError": "hostagent.exceptions",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hostagent' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
