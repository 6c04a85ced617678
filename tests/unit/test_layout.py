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


# Every command the README's command table documents, and the module that provides each.
EXPECTED_COMMANDS = {"compile": "p4switch.cli", "switch": "p4switch.cli", "ctl": "controller.cli",
                     "run": "p4fabric.cli", "demo": "p4fabric.cli", "bench": "bench.cli", "model": "bench.scale.cli",
                     "certs": "p4ina.pki_cli"}


def test_p4ina_has_exactly_the_documented_subcommands() -> None:
    """The full set, not just the commands that happened to load: a command module that fails to import makes
    build_parser raise, and a command that disappears or appears unannounced fails here."""
    from p4ina.cli import SUBCOMMAND_MODULES, build_parser

    parser = build_parser()
    help_text = parser.format_help()
    actions = [a for a in parser._actions if a.dest == "command"]
    assert actions, "no subcommand table"
    choices = set(actions[0].choices or {})
    assert choices == set(EXPECTED_COMMANDS)
    assert set(SUBCOMMAND_MODULES) == set(EXPECTED_COMMANDS.values())
    for name in choices:
        assert name in help_text
    readme = (REPO / "README.md").read_text()
    for name in EXPECTED_COMMANDS:
        assert f"`p4ina {name}" in readme, f"README's command table lacks p4ina {name}"
