"""`mininet/p4fabric/custom.py` loaded the way `mn --custom` loads it: exec'd without `__file__`, every name copied
into mn's globals."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

CUSTOM = Path(__file__).resolve().parents[3] / "mininet" / "p4fabric" / "custom.py"


def _load(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setenv("PYTHONPATH", "")
    customs: dict[str, Any] = {}
    exec(compile(CUSTOM.read_text(), str(CUSTOM), "exec"), customs, customs)
    return customs


def test_mn_sees_our_topos_switch_and_link(monkeypatch: pytest.MonkeyPatch) -> None:
    from p4fabric.node import P4Link, P4Switch

    customs = _load(["mn", "--switch", "p4ina"], monkeypatch)
    assert set(customs["topos"]) == {"single", "leafspine", "fattree", "dragonfly", "torus", "ring", "ocs-leafspine"}
    assert customs["switches"] == {"p4ina": P4Switch}
    assert customs["links"] == {"p4ina": P4Link}
    public = {k for k in customs if not k.startswith("_")}
    assert public == {"topos", "switches", "links", "findController"}  # mn copies every name into its globals


@pytest.mark.parametrize("argv", [["mn", "--switch", "p4ina"], ["mn", "--switch=p4ina,target=bmv2"],
                                  ["mn", "--topo", "single", "--switch", "p4ina,pcap=1"]])
def test_no_openflow_controller_for_p4_switches(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mininet.node import NullController

    assert _load(argv, monkeypatch)["findController"]() is NullController


def test_other_switches_keep_mininets_controller_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    from mininet.node import NullController

    customs = _load(["mn", "--switch", "ovsk"], monkeypatch)
    assert customs["findController"](controllers=[]) is None  # Mininet's own lookup, not ours
    assert customs["findController"](controllers=[]) is not NullController


def test_switch_processes_get_the_project_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    _load(["mn", "--switch", "p4ina"], monkeypatch)
    parts = os.environ["PYTHONPATH"].split(os.pathsep)
    assert str(CUSTOM.parents[2]) in parts and str(CUSTOM.parents[1]) in parts


def test_topology_spec_through_mininets_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    from mininet.util import buildTopo

    topo = buildTopo(_load(["mn"], monkeypatch)["topos"], "leafspine,2,2")
    assert sorted(topo.switches()) == ["leaf1", "leaf2", "spine1", "spine2"] and len(topo.hosts()) == 4
