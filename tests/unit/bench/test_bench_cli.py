"""`p4ina bench`: discovery of benchmark modules, JSON files per benchmark, failures reported but not fatal."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.cli import discover, headline, register, run_benchmarks, select_modules

MODULES = {
    "__init__.py": "",
    "cli.py": "def run(quick):\n    raise AssertionError('cli is not a benchmark')\n",
    "switch_pps.py": '"""Switch packet rate."""\n'
                     "def run(quick):\n    return {'summary': {'pps': 1234.5678, 'program': 'fwd'}, 'quick': quick}\n",
    "alpha.py": "def run(quick):\n    return {'x': 1, 'nested': {'a': 1}, 'flag': True}\n",
    "broken.py": "def run(quick):\n    raise RuntimeError('no fabric here')\n",
    "listy.py": "def run(quick):\n    return [1, 2]\n",
    "norun.py": "VALUE = 1\n",
    "needsroot.py": "def unavailable():\n    return 'needs root'\ndef run(quick):\n    raise AssertionError\n",
}


@pytest.fixture
def fakebench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    package = tmp_path / "pkgs" / "fakebench"
    package.mkdir(parents=True)
    for name, text in MODULES.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    yield "fakebench"
    for name in [m for m in sys.modules if m == "fakebench" or m.startswith("fakebench.")]:
        del sys.modules[name]


def test_discover_orders_switch_pps_first_and_skips_cli(fakebench: str) -> None:
    assert discover(fakebench, ()) == [f"{fakebench}.{n}"
                                       for n in ("switch_pps", "alpha", "broken", "listy", "needsroot", "norun")]
    assert discover(fakebench, ("extra.bench",))[-1] == "extra.bench"


def test_run_writes_json_and_reports_failures(fakebench: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = run_benchmarks(discover(fakebench, ()), out_dir=out, quick=True)
    status = {r["name"]: r["status"] for r in summary["benchmarks"]}
    assert status == {"switch_pps": "ok", "alpha": "ok", "broken": "failed", "listy": "failed",
                      "norun": "unavailable", "needsroot": "unavailable"}
    pps = json.loads((out / "switch_pps.json").read_text())
    assert pps["quick"] is True and pps["summary"]["pps"] == 1234.5678
    by_name = {r["name"]: r for r in summary["benchmarks"]}
    assert by_name["switch_pps"]["headline"] == {"pps": 1234.568, "program": "fwd"}
    assert by_name["switch_pps"]["description"] == "Switch packet rate."
    assert "RuntimeError: no fabric here" in by_name["broken"]["detail"]
    assert by_name["needsroot"]["detail"] == "needs root"
    assert "no fabric here" in (out / "broken.error.txt").read_text()
    assert json.loads((out / "summary.json").read_text())["benchmarks"] == summary["benchmarks"]


def test_headline_takes_top_level_scalars() -> None:
    assert headline({"x": 1, "nested": {"a": 1}, "flag": True, "s": "t"}) == {"x": 1, "s": "t"}


def test_select_modules() -> None:
    modules = ["bench.switch_pps", "bench.alpha"]
    assert select_modules(modules, None) == modules
    assert select_modules(modules, ["alpha", "bench.alpha"]) == ["bench.alpha"]


def test_command_line_shape(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["bench", "--quick", "--out", str(tmp_path), "--only", "switch_pps"])
    assert args.quick and args.out == tmp_path and args.only == ["switch_pps"] and callable(args.handler)
