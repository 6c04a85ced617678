"""Switch targets behind one interface: `get_target("embedded" | "bmv2" | "auto")` returns a `Target` that
compiles P4 programs, runs switches on given ports and performs admin operations."""

from __future__ import annotations

from p4ina.targets.base import CompiledProgram, PortImpairment, RunningSwitch, SwitchConfig, Target
from p4ina.targets.exceptions import (
    AdminError,
    SwitchStartError,
    TargetCompileError,
    TargetError,
    TargetUnavailableError,
    UnsupportedOperationError,
)
from p4ina.targets.registry import TARGET_NAMES, get_target, resolve_target_name
from p4ina.targets.tls import SwitchTls

__all__ = [
    "TARGET_NAMES",
    "AdminError",
    "CompiledProgram",
    "PortImpairment",
    "RunningSwitch",
    "SwitchConfig",
    "SwitchStartError",
    "SwitchTls",
    "Target",
    "TargetCompileError",
    "TargetError",
    "TargetUnavailableError",
    "UnsupportedOperationError",
    "get_target",
    "resolve_target_name",
]
