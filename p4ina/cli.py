"""The `p4ina` command: one entry point whose subcommands are contributed by the layer packages.

Each layer exposes `register(subparsers)` in its own `cli` module, so the layers stay independent and this file
only lists them. A layer that fails to load (a missing optional dependency, a bug) is named with its error at the
end of `--help`, and every other layer's commands keep working.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# (module providing register(subparsers)); order is the order shown in --help.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "p4switch.cli",
    "controller.cli",
    "p4fabric.cli",
    "bench.cli",
    "bench.scale.cli",
    "p4ina.pki_cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="p4ina",
        description="In-network aggregation on P4 switches: compile, run switches, control fabrics, run jobs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    unavailable: list[str] = []
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
            module.register(subparsers)
        except Exception as exc:  # one broken layer must not take the other layers' commands down with it
            unavailable.append(f"{module_name} ({type(exc).__name__}: {exc})")
    if unavailable:
        parser.epilog = "unavailable: " + "; ".join(unavailable)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _version() -> str:
    from p4ina import __version__

    return __version__


if __name__ == "__main__":
    sys.exit(main())
