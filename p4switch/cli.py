"""`p4ina compile` and `p4ina switch`: the embedded target's commands (compiler and switch each own theirs)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from p4switch.compile_cli import register as register_compile
    from p4switch.switch_cli import register as register_switch

    register_compile(subparsers)
    register_switch(subparsers)
