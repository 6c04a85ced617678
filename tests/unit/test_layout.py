"""The repository layout keeps its promises: `mininet/` never shadows Mininet, and `p4ina` lists its commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("cwd", [REPO, REPO / "mininet"])
def test_mininet_import_is_debians_not_ours(cwd: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import mininet.net, mininet.topo; print(mininet.net.__file__)"],
        cwd=cwd, capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert not out.startswith(str(REPO / "mininet")), out
    assert Path(out).name == "net.py"


def test_mininet_folder_is_not_a_package() -> None:
    assert not (REPO / "mininet" / "__init__.py").exists()


def test_p4ina_help_lists_subcommands() -> None:
    from p4ina.cli import build_parser

    parser = build_parser()
    help_text = parser.format_help()
    actions = [a for a in parser._actions if a.dest == "command"]
    assert actions, "no subcommand table"
    choices = sorted(actions[0].choices or {})  # type: ignore[attr-defined]
    for name in choices:
        assert name in help_text
