"""Errors of the host agent. Everything it raises on bad input or a failed collective derives from
`HostAgentError`, so a CLI or a training script can print one clear line instead of a traceback."""

from __future__ import annotations

from collections.abc import Sequence


class HostAgentError(Exception):
    """Base class of every error the host agent reports to a user."""


class ArrayTypeError(HostAgentError, TypeError):
    """The array given to an all-reduce is not a supported numpy array (float32, float64 or int32)."""


class NoRouteError(HostAgentError):
    """The switch (or a ring peer) cannot be reached: no interface, address or route to it."""


class JobNotAdmittedError(HostAgentError):
    """The switch answered nothing at all for this job: the controller has not admitted it (or this host)."""


class ProtocolError(HostAgentError):
    """A configuration the wire protocol cannot express (a job id, rank or slot count out of range)."""


class QuantizationError(HostAgentError):
    """A value cannot be represented in the chosen fixed-point format (NaN, infinity, or out of range)."""


class AllReduceTimeoutError(HostAgentError):
    """Some chunks got no RESULT after the allowed number of retransmissions.

    `missing` lists the chunk sequence numbers still outstanding, so the user sees what was lost, not just that
    something was."""

    def __init__(self, job: int, rank: int, retries: int, missing: Sequence[int], total: int) -> None:
        self.job = job
        self.rank = rank
        self.retries = retries
        self.missing = list(missing)
        self.total = total
        shown = ", ".join(str(m) for m in self.missing[:16])
        more = f" (+{len(self.missing) - 16} more)" if len(self.missing) > 16 else ""
        super().__init__(
            f"job {job} rank {rank}: all-reduce timed out after {retries} retries; "
            f"{len(self.missing)}/{total} chunks missing: {shown}{more}"
        )


class RingError(HostAgentError):
    """The host-based ring all-reduce baseline failed (a peer closed its connection or sent the wrong size)."""
