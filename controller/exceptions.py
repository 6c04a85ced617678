"""Errors of the controller package.

Every failure the controller can report derives from `ControllerError`, so the CLI can turn any of them into one
line and a non-zero exit. Subclasses exist where a caller reacts differently (retry, fail over, refuse a job).
"""

from __future__ import annotations

from dataclasses import dataclass


class ControllerError(Exception):
    """Base class of every controller error."""


class P4InfoError(ControllerError):
    """A name, id or value does not fit the switch's P4Info."""


class EncodingError(P4InfoError):
    """A value does not fit its field's bit width or cannot be parsed."""


class TopologyError(ControllerError):
    """The topology file or model is invalid (unknown node, duplicate name, bad port)."""


class TreeError(ControllerError):
    """No reduction tree can be built for the requested members."""


class AdmissionError(ControllerError):
    """A job is refused because a switch lacks slots, multicast groups or job ids; nothing was installed."""


class JobError(ControllerError):
    """A job operation refers to an unknown job or conflicts with an existing one."""


class StateError(ControllerError):
    """The persisted controller state cannot be read or written."""


class SwitchError(ControllerError):
    """A switch could not be reached or answered an RPC with an error."""

    def __init__(self, switch: str, message: str) -> None:
        super().__init__(f"{switch}: {message}")
        self.switch = switch


class SwitchUnavailableError(SwitchError):
    """The switch does not answer (connection refused, deadline exceeded, stream broken)."""


class MastershipError(SwitchError):
    """This client is not (or no longer) the primary controller of the switch; it must stop writing."""


@dataclass(frozen=True)
class UpdateError:
    """One failed update of a batch, decoded from `grpc-status-details-bin` (P4Runtime spec, section 12.3)."""

    index: int
    code: int
    code_name: str
    message: str

    def __str__(self) -> str:
        return f"update {self.index}: {self.code_name}: {self.message}"


class RpcError(SwitchError):
    """An RPC failed; `updates` lists the per-update errors of a Write (only the failed ones)."""

    def __init__(self, switch: str, rpc: str, code_name: str, message: str,
                 updates: list[UpdateError] | None = None) -> None:
        self.rpc = rpc
        self.code_name = code_name
        self.detail = message
        self.updates = updates or []
        text = f"{rpc} failed: {code_name}: {message}" if message else f"{rpc} failed: {code_name}"
        if self.updates:
            text += " [" + "; ".join(str(u) for u in self.updates) + "]"
        super().__init__(switch, text)
