"""The `p4ina` command: one entry point whose subcommands are contributed by the layer packages.

Each layer exposes `register(subparsers)` in its own `cli` module, so the layers stay independent and this file
only lists them. A layer that fails to load (a missing dependency, a bug) is an error: `p4ina` names every module
that failed with its exception and exits 1, instead of quietly running without that layer's commands.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence


class CommandLoadError(RuntimeError):
    """One or more command modules failed to import or register; `failures` holds "module (Error: message)"."""

    def __init__(self, failures: list[str]) -> None:
        super().__init__("cannot load command modules: " + "; ".join(failures))
        self.failures = failures


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
    failures: list[str] = []
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
            module.register(subparsers)
        except Exception as exc:  # collected, so that one run names every broken layer
            failures.append(f"{module_name} ({type(exc).__name__}: {exc})")
    if failures:
        raise CommandLoadError(failures)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
    except CommandLoadError as exc:
        for failure in exc.failures:
            print(f"p4ina: cannot load command module {failure}", file=sys.stderr)
        return 1
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
