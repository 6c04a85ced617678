"""The `p4ina` command survives a broken layer: its error is named in --help and the other commands still run."""

from __future__ import annotations

import sys
import types

import pytest

from p4ina import cli


def test_a_broken_layer_is_reported_and_the_rest_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = types.ModuleType("p4ina_test_broken_layer")

    def register(subparsers: object) -> None:
        raise NameError("name 'oops' is not defined")

    broken.register = register  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "p4ina_test_broken_layer", broken)
    monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", ("p4ina_test_broken_layer", "p4ina.pki_cli"))
    parser = cli.build_parser()
    assert "p4ina_test_broken_layer (NameError: name 'oops' is not defined)" in parser.format_help()
    args = parser.parse_args(["certs", "--out", "/nonexistent-dir-for-parse-only"])
    assert args.command == "certs"


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert "usage: p4ina" in capsys.readouterr().out
