"""`p4ina compile` and `p4ina switch`: the embedded target's commands (compiler and switch each own theirs)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from p4switch import compile_cli, switch_cli

    compile_cli.register(subparsers)
    switch_cli.register(subparsers)
