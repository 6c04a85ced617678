"""Run `p4ina switch` in a subprocess, through `python -m p4ina` when the embedded target's command hook imports
(it also needs the compiler's `compile_cli`), else through `p4switch.switch_cli` directly with the same parser."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

_DIRECT = (
    "import argparse, sys\n"
    "from p4switch import switch_cli\n"
    "p = argparse.ArgumentParser(prog='p4ina')\n"
    "switch_cli.register(p.add_subparsers())\n"
    "a = p.parse_args(sys.argv[1:])\n"
    "sys.exit(a.handler(a))\n"
)


def switch_command(args: Sequence[str]) -> list[str]:
    if importlib.util.find_spec("p4switch.compile_cli") is not None:
        return [sys.executable, "-m", "p4ina", "switch", *args]
    return [sys.executable, "-c", _DIRECT, "switch", *args]


def run_switch(args: Sequence[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(switch_command(args), cwd=cwd, capture_output=True, text=True, timeout=timeout)
