"""The `p4ina` command fails loudly when a layer's command module is broken: build_parser raises with every broken
module named, and `p4ina` prints them and exits 1 instead of running without those commands."""

from __future__ import annotations

import sys
import types

import pytest

from p4ina import cli


def _broken_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = types.ModuleType("p4ina_test_broken_layer")

    def register(subparsers: object) -> None:
        raise NameError("name 'oops' is not defined")

    broken.register = register  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "p4ina_test_broken_layer", broken)
    monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", ("p4ina_test_broken_layer", "p4ina.pki_cli",
                                                    "p4ina_test_missing_layer"))


def test_a_broken_layer_is_an_error_naming_every_broken_module(monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_layer(monkeypatch)
    with pytest.raises(cli.CommandLoadError) as info:
        cli.build_parser()
    assert info.value.failures[0] == "p4ina_test_broken_layer (NameError: name 'oops' is not defined)"
    assert info.value.failures[1].startswith("p4ina_test_missing_layer (ModuleNotFoundError:")
    assert len(info.value.failures) == 2


def test_p4ina_exits_1_and_says_which_layer_is_broken(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _broken_layer(monkeypatch)
    assert cli.main(["certs", "--help"]) == 1
    err = capsys.readouterr().err
    assert "p4ina: cannot load command module p4ina_test_broken_layer (NameError: name 'oops' is not defined)" in err


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert "usage: p4ina" in capsys.readouterr().out
