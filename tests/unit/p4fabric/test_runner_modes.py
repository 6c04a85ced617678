"""`p4ina run`'s modes without a fabric: the order a run measures them in, their report names, the formats option
(with the one-format shorthand), the CLI's repeatable --mode/--fmt, and how a worker's final record is read."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from p4fabric.cli import register, run_options
from p4fabric.exceptions import RunError
from p4fabric.faults import FaultPlan
from p4fabric.runner import ModeRun, RunOptions, plan_modes, worker_result


def test_order_is_ring_gloo_then_formats_as_given() -> None:
    plan = plan_modes(("innet", "gloo", "ring"), ("int8", "int32", "int16"))
    assert [(r.mode, r.fmt) for r in plan] == [("ring", ""), ("gloo", ""), ("innet", "int8"), ("innet", "int32"),
                                               ("innet", "int16")]
    assert [r.name for r in plan] == ["ring", "gloo", "in-network int8", "in-network", "in-network int16"]
    assert [r.tag for r in plan] == ["ring", "gloo", "innet-int8", "innet", "innet-int16"]
    assert plan_modes(("ring",), ("int8",)) == [ModeRun("ring")]  # formats only matter to in-network


def test_fmt_is_a_one_format_shorthand(tmp_path: Path) -> None:
    assert RunOptions(topo="single,2", out=tmp_path).fmts == ("int32",)
    shorthand = RunOptions(topo="single,2", out=tmp_path, fmt="int16")
    assert shorthand.fmts == ("int16",)
    shorthand.validate()
    both = RunOptions(topo="single,2", out=tmp_path, fmt="int16", fmts=("int8", "int32"))
    with pytest.raises(RunError, match="one-format shorthand"):
        both.validate()


@pytest.mark.parametrize(("fmts", "message"), [(("int32", "int4"), "unknown format.*int4"),
                                               (("int8", "int32", "int8"), "--fmt int8 given more than once")])
def test_bad_formats_are_refused(tmp_path: Path, fmts: tuple[str, ...], message: str) -> None:
    with pytest.raises(RunError, match=message):
        RunOptions(topo="single,2", out=tmp_path, fmts=fmts).validate()


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="p4ina")
    register(parser.add_subparsers())
    return parser.parse_args(argv)


def test_cli_repeats_fmt_and_mode(tmp_path: Path) -> None:
    args = _parse(["run", "--topo", "leafspine,2,1,2", "--out", str(tmp_path), "--mode", "gloo", "--mode", "innet",
                   "--fmt", "int32", "--fmt", "int8", "--retx-min", "0.05"])
    opts = run_options(args, topo=args.topo, modes=tuple(args.mode), plan=FaultPlan(), cli=False)
    assert opts.fmts == ("int32", "int8") and opts.modes == ("gloo", "innet") and opts.retx_min == 0.05
    opts.validate()
    default = _parse(["run", "--topo", "single,2", "--out", str(tmp_path)])
    assert run_options(default, topo="single,2", modes=("innet",), plan=FaultPlan(), cli=False).fmts == ("int32",)
    with pytest.raises(SystemExit):
        _parse(["run", "--topo", "single,2", "--out", str(tmp_path), "--fmt", "int4"])


def test_duplicate_fmt_is_one_line_from_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse(["run", "--topo", "single,2", "--out", str(tmp_path), "--fmt", "int8", "--fmt", "int8"])
    assert args.handler(args) == 1
    assert capsys.readouterr().err.strip() == "p4ina run: error: --fmt int8 given more than once"


def test_worker_result_reads_the_verdicts() -> None:
    final = {"done": True, "step_seconds": [0.25], "exact": False, "within_bound": True, "max_abs_error": 31.0,
             "error_bound": 96.5, "stats": {"retransmissions": 2, "note": "x"}}
    result = worker_result(ModeRun("innet", "int8"), 1, "h2", final, [])
    assert (result.mode, result.fmt, result.host, result.rank) == ("in-network int8", "int8", "h2", 1)
    assert result.correct and not result.exact and result.max_abs_error == 31.0 and result.error_bound == 96.5
    assert result.stats == {"retransmissions": 2.0}
    # the same record for int32 is wrong: int32 must be bit-exact
    assert not worker_result(ModeRun("innet", "int32"), 1, "h2", final, []).correct
    # an older record without within_bound: within bound exactly when exact
    old = worker_result(ModeRun("ring"), 0, "h1", {"done": True, "exact": True}, [0.5])
    assert old.correct and old.within_bound and old.step_seconds == [0.5]
    failed = worker_result(ModeRun("innet", "int8"), 0, "h1", {**final, "error": "Timeout: boom"}, [])
    assert not failed.correct


def test_a_precompiled_program_must_match_the_run(tmp_path) -> None:
    from p4fabric.runner import DEFAULT_PROGRAM, Runner

    from p4ina.targets import CompiledProgram

    other = CompiledProgram(target="bmv2", source=DEFAULT_PROGRAM, p4info=tmp_path / "x.txtpb",
                            device_config=tmp_path / "x.json")
    with pytest.raises(RunError, match=r"not .*p4ina\.p4 for embedded"):
        Runner(RunOptions(topo="single,2", out=tmp_path / "run", compiled=other), log=lambda _t: None).run()
