"""`p4ina run` / `p4ina demo` argument handling that needs no fabric: clear one-line errors, --clean, faults."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from p4fabric.cli import register
from p4fabric.exceptions import FaultSpecError
from p4fabric.faults import FaultEvent, FaultInjector, build_plan, parse_percent, validate_plan
from p4fabric.runner import RunOptions

from bench.fabric_runs.sweep import BENCH_OPTIONS


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="p4ina")
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_bmv2_missing_is_reported_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no BMv2 binaries here, whatever the machine has
    assert _run(["run", "--topo", "single,2", "--out", str(tmp_path / "o"), "--target", "bmv2"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("p4ina run: error: target bmv2 needs p4c-bm2-ss and simple_switch_grpc on PATH")
    assert len(err.splitlines()) == 1


def test_run_needs_topo_and_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["run", "--size", "10"]) == 2
    assert "--topo and --out are required" in capsys.readouterr().err


def test_bad_fault_spec_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["run", "--topo", "single,2", "--out", str(tmp_path), "--kill-switch", "spine1"]) == 1
    assert capsys.readouterr().err.strip() == ("p4ina run: error: --kill-switch 'spine1': expected SWITCH@SECONDS, "
                                               "e.g. spine1@1.5")


def test_clean_with_nothing_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("P4INA_STATE_DIR", str(tmp_path / "state"))
    assert _run(["run", "--clean"]) == 0
    assert "nothing to clean" in capsys.readouterr().out


def test_fault_plan_parsing() -> None:
    plan = build_plan(loss="2%", dup="0.5", link_down=["leaf1-spine1@2.5"], kill_switch=["spine1@1"],
                      bitflip=["agg0_1@3s"])
    assert plan.loss_percent == 2.0 and plan.dup_percent == 0.5
    assert plan.link_options() == {"loss": 2.0, "dup": 0.5}
    assert [e.describe() for e in plan.events] == ["kill-switch spine1 at 1 s", "link-down leaf1-spine1 at 2.5 s",
                                                   "bitflip agg0_1 at 3 s"]
    with pytest.raises(FaultSpecError, match="below 100%"):
        parse_percent("100", "--loss")
    with pytest.raises(FaultSpecError, match="percentage"):
        parse_percent("lots", "--dup")
    with pytest.raises(FaultSpecError, match="two different nodes"):
        build_plan(link_down=["s1-s1@1"])


def test_fault_plan_checked_against_the_topology() -> None:
    plan = build_plan(link_down=["leaf1-spine3@1"])
    with pytest.raises(FaultSpecError, match="no link leaf1-spine3"):
        validate_plan(plan, ["leaf1", "spine1"], [("leaf1", "spine1")])
    with pytest.raises(FaultSpecError, match="no switch 'core9'"):
        validate_plan(build_plan(kill_switch=["core9@1"]), ["leaf1"], [])
    validate_plan(build_plan(link_down=["spine1-leaf1@1"]), ["leaf1", "spine1"], [("leaf1", "spine1")])


def test_injector_fires_in_order_and_records_errors() -> None:
    now = [0.0]
    fired: list[str] = []

    def ok(event: FaultEvent) -> str:
        fired.append(event.describe())
        return "done"

    def broken(event: FaultEvent) -> str:
        raise RuntimeError("switch gone")

    events = [FaultEvent(2.0, "bitflip", ("s1",)), FaultEvent(1.0, "kill-switch", ("s2",))]
    injector = FaultInjector(events, {"bitflip": broken, "kill-switch": ok}, clock=lambda: now[0])
    for event in injector.events:  # fire synchronously with a fake clock
        now[0] = event.at
        injector.fire(event)
    records = injector.stop()
    assert [r.as_dict()["kind"] for r in records] == ["kill-switch", "bitflip"]
    assert records[0].ok and records[0].outcome == "done"
    assert not records[1].ok and records[1].outcome == "RuntimeError: switch gone"
    assert fired == ["kill-switch s2 at 1 s"]
    with pytest.raises(FaultSpecError, match="no way to inject link-down"):
        FaultInjector([FaultEvent(1, "link-down", ("a", "b"))], {})


def test_demo_is_registered() -> None:
    parser = argparse.ArgumentParser(prog="p4ina")
    register(parser.add_subparsers())
    args = parser.parse_args(["demo"])
    assert args.size >= 1_000_000 and callable(args.handler)
    demo = RunOptions(topo="single,2", out=Path("o"), slots=args.slots, window=args.window)
    # the benchmarks' settings on the embedded target: the target's pool, a window of half of it
    assert (demo.pool("embedded"), demo.worker_window("embedded"), args.retx_min) == (
        BENCH_OPTIONS["slots"], BENCH_OPTIONS["window"], 0.01)
    assert parser.parse_args(["demo", "--slots", "8"]).slots == 8
    assert parser.parse_args(["run", "--topo", "single,2"]).slots is None  # the target decides
    plain = RunOptions(topo="single,2", out=Path("o"))
    assert (plain.pool("bmv2"), plain.worker_window("bmv2")) == (64, 32)  # real BMv2 keeps SwitchML's pool
    assert (plain.pool("embedded"), plain.worker_window("embedded")) == (256, 128)
    assert RunOptions(topo="single,2", out=Path("o"), slots=1).worker_window("embedded") == 1
    assert RunOptions(topo="single,2", out=Path("o"), slots=64, window=64).worker_window("bmv2") == 64

