"""`p4ina ctl job create --spare` / `job replace` / `job show` end to end on embedded P4Runtime servers (loopback):
the spare is recorded, the rank moves with the dead worker's child index, the dead child's cells come back for the
spare's resume points, and `job show` reports the replacement (docs/controller.md, "Spares and replacement")."""

from __future__ import annotations

import json

import pytest
from test_controller_cli import Lab, ctl, lab, push

__all__ = ["lab"]  # the fixture, used by name below


def test_job_replace_through_the_cli(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    push(lab, capsys)
    rc, out, err = ctl(lab, capsys, "job", "create", "h1,h3", "--spare", "h2", "--slots", "8", "--json")
    assert rc == 0, err
    job = json.loads(out)
    assert job["spares"] == ["h2"]
    before = {w["host"]: w for w in job["workers"]}
    rc, out, err = ctl(lab, capsys, "job", "replace", str(job["job"]), "h1", "--json")
    assert rc == 0, err
    moved = json.loads(out)
    assert (moved["dead"], moved["spare"], moved["same_switch"]) == ("h1", "h2", True)
    after = {w["host"]: w for w in moved["workers"]}
    assert "h1" not in after and after["h2"]["rank"] == before["h1"]["rank"]
    assert after["h2"]["child_index"] == before["h1"]["child_index"] and after["h2"]["switch"] == "leaf1"
    assert moved["ranks"][before["h1"]["rank"]] == "h2"
    # the dead child's cells on leaf1: 8 slots x 2 versions, nothing aggregated yet, so no bit set and none used
    assert moved["cells"] == [[[0, 0, 0, 0], [0, 0, 0, 0]]] * 8
    rc, out, _ = ctl(lab, capsys, "job", "show", str(job["job"]), "--json")
    shown = json.loads(out)
    assert shown["spares"] == [] and [r["spare"] for r in shown["replaced"]] == ["h2"]
    assert "h1 replaced by h2" in shown["text"]
    # no spare left: a second replacement is refused in one line and changes nothing
    rc, _, err = ctl(lab, capsys, "job", "replace", str(job["job"]), "h3", "--json")
    assert rc == 1 and "no spare" in err and len(err.strip().splitlines()) == 1
