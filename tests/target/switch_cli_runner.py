"""Run `p4ina switch` in a subprocess, through `python -m p4ina` (the installed command's own entry point)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def switch_command(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "p4ina", "switch", *args]


def run_switch(args: Sequence[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(switch_command(args), cwd=cwd, capture_output=True, text=True, timeout=timeout)
