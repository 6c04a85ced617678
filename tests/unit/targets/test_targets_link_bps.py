"""The port speed PFC pauses are timed with reaches the embedded switch: `p4ina switch --link-bps` and the target's
command line (emulated PFC fabrics need pauses far longer than 3.3 ms; the Mininet ring test uses it end to end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4ina.cli import build_parser
from p4ina.targets import SwitchConfig
from p4ina.targets.embedded import EmbeddedTarget


def _config(tmp_path: Path, **kw: object) -> SwitchConfig:
    return SwitchConfig(name="s1", ports={1: "s1-eth1"}, grpc_port=1, log_file=tmp_path / "s.log", **kw)  # type: ignore[arg-type]


def test_command_line_passes_the_link_speed(tmp_path: Path) -> None:
    argv = EmbeddedTarget().command(_config(tmp_path, link_bps=1e6))
    assert argv[argv.index("--link-bps") + 1] == "1000000.0"
    assert "--link-bps" not in EmbeddedTarget().command(_config(tmp_path))


@pytest.mark.parametrize("bad", [0.0, -1e9, float("inf")])
def test_config_rejects_a_link_speed_that_is_not_positive(tmp_path: Path, bad: float) -> None:
    with pytest.raises(ValueError, match="link speed"):
        _config(tmp_path, link_bps=bad)


def test_switch_flag_parses_and_rejects_bad_speeds(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    assert parser.parse_args(["switch", "--no-p4", "--link-bps", "1e6"]).link_bps == 1e6
    assert parser.parse_args(["switch", "--no-p4"]).link_bps is None
    for bad in ("fast", "0", "-5"):
        with pytest.raises(SystemExit):
            parser.parse_args(["switch", "--no-p4", "--link-bps", bad])
        assert "link speed" in capsys.readouterr().err

