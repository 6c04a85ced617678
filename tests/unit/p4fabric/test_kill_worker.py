"""`--kill-worker H@T` and `--spare`: parsing, validation, the default spare, and where a spare resumes
(`controller.standby.resume_points`, from the rule in docs/controller.md "Spares and replacement")."""

from __future__ import annotations

import pytest
from p4fabric.exceptions import FaultSpecError, RunError
from p4fabric.faults import FaultEvent, build_plan, validate_plan
from p4fabric.replace import default_spares

from controller.standby import Cell, resume_points


def test_kill_worker_parses_and_validates_against_hosts() -> None:
    plan = build_plan(kill_worker=["h2@1.5"], kill_switch=["spine1@3"])
    assert plan.events == [FaultEvent(1.5, "kill-worker", ("h2",)), FaultEvent(3.0, "kill-switch", ("spine1",))]
    validate_plan(plan, ["spine1", "leaf1"], [], hosts=["h1", "h2"])
    with pytest.raises(FaultSpecError, match="no host 'h2'"):
        validate_plan(plan, ["spine1"], [], hosts=["h1"])
    with pytest.raises(FaultSpecError, match="HOST@SECONDS"):
        build_plan(kill_worker=["h2"])
    with pytest.raises(FaultSpecError, match="twice"):
        build_plan(kill_worker=["h2@1", "h2@2"])


def test_default_spare_is_the_first_host_not_a_worker() -> None:
    hosts = ["h1", "h2", "h3", "h4"]
    assert default_spares(hosts, ["h1", "h2", "h3"], []) == ["h4"]
    assert default_spares(hosts, ["h2", "h3", "h4"], ["h1"]) == ["h1"]
    with pytest.raises(RunError, match="needs a spare"):
        default_spares(hosts, hosts, [])


def _c(mine: bool, step: int, seq: int, used: bool = True) -> Cell:
    return Cell(mine, step, seq, used)


def test_resume_points_follow_the_dead_childs_bits() -> None:
    pool, step = 4, 7
    cells = [
        # slot 0: the dead child's bit in round 4 (version 1); round 0 (version 0) was finished by it
        (_c(False, step, 0), _c(True, step, 4)),
        # slot 1: its bit in round 1 only (version 0); version 1 holds the previous collective
        (_c(True, step, 1), _c(False, step - 1, 9)),
        # slot 2: rounds of this collective without its bit: the slot's first chunk (2) is where it resumes
        (_c(False, step, 2), _c(False, step - 1, 6)),
        # slot 3: nothing of this collective yet (one cell never used)
        (_c(True, step - 1, 7), _c(False, 0, 0, used=False)),
    ]
    assert resume_points(cells, step, pool) == [4, 1, 2, 3]
    # serialised as `p4ina ctl job replace` returns them
    assert [(Cell.from_list(a.as_list()), Cell.from_list(b.as_list())) for a, b in cells] == cells
    with pytest.raises(ValueError):
        resume_points(cells[:3], step, pool)
