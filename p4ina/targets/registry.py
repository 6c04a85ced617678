"""Choosing a target by name: `embedded`, `bmv2`, or `auto` (BMv2 when both of its binaries are on PATH)."""

from __future__ import annotations

from p4ina.targets.base import Target
from p4ina.targets.bmv2 import Bmv2Target
from p4ina.targets.embedded import EmbeddedTarget
from p4ina.targets.exceptions import TargetError

TARGET_NAMES: tuple[str, ...] = ("embedded", "bmv2", "auto")


def resolve_target_name(name: str) -> str:
    """`auto` -> `bmv2` if p4c-bm2-ss and simple_switch_grpc are both on PATH, else `embedded`."""
    if name == "auto":
        return "bmv2" if not Bmv2Target().missing() else "embedded"
    if name not in TARGET_NAMES:
        raise TargetError(f"unknown target {name!r}; choose one of {', '.join(TARGET_NAMES)}")
    return name


def get_target(name: str = "embedded", *, check: bool = True) -> Target:
    """The target called `name`; with `check`, fail now (clearly) if its tools are missing."""
    resolved = resolve_target_name(name)
    target: Target = Bmv2Target() if resolved == "bmv2" else EmbeddedTarget()
    if check:
        target.check_available()
    return target
