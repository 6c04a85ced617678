"""Errors of the target layer. Everything here derives from `TargetError`, so the command line can print one clear
line and exit non-zero instead of a traceback."""

from __future__ import annotations


class TargetError(Exception):
    """Base class of every error a target reports to a user."""


class TargetUnavailableError(TargetError):
    """The chosen target's tools are not installed; the message says what is missing and how to install it."""


class TargetCompileError(TargetError):
    """The target's compiler rejected the program; the message carries the compiler's own diagnostics."""


class SwitchStartError(TargetError):
    """A switch process did not start or did not answer on its gRPC port; the message ends with its log tail."""


class AdminError(TargetError):
    """An admin operation (queue rate/depth, impairment, register read) failed on a running switch."""


class UnsupportedOperationError(TargetError):
    """The target (or this machine's kernel) cannot do what was asked; the message says what would be needed."""
