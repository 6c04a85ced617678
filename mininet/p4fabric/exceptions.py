"""Errors of the emulation layer (`p4fabric`). The command line prints them as one line and exits non-zero."""

from __future__ import annotations


class FabricError(Exception):
    """Base class of every error the emulation layer reports to a user."""


class TopologySpecError(FabricError):
    """A `--topo` specification or topology parameter is invalid."""


class FaultSpecError(FabricError):
    """A fault injection option (`--link-down`, `--kill-switch`, `--bitflip`, `--loss`, `--dup`) is invalid."""


class FabricStartError(FabricError):
    """The emulated fabric could not be built or one of its switches did not start."""


class RunError(FabricError):
    """A run could not complete (controller, job set-up or workers failed)."""
