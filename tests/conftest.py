"""Test tiers (see docs/testing.md): unit, target and integration tests always run (CI runs as root); bmv2 tests need
the real binaries. The skip policy: only a bmv2 test may skip, and only because a named binary is missing. Any other
skip (a collection-time skip included) is listed at the end of the run and fails it, so a regression can never hide
as a skip."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFORMANCE = REPO / "tests" / "conformance"

BMV2_BINARIES = ("p4c-bm2-ss", "simple_switch_grpc")

_bmv2_items: set[str] = set()
_bad_skips: list[str] = []


_pipeline_cache: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    """The switches' on-disk pipeline cache (p4switch/pipeline_cache.py) goes to a folder of this run, inherited by
    every switch process the tests start, and removed at the end: tests leave nothing in the user's cache."""
    global _pipeline_cache
    if "P4INA_PIPELINE_CACHE" not in os.environ:
        _pipeline_cache = tempfile.mkdtemp(prefix="p4ina-test-pipelines-")
        os.environ["P4INA_PIPELINE_CACHE"] = _pipeline_cache


def pytest_unconfigure(config: pytest.Config) -> None:
    if _pipeline_cache is not None:
        shutil.rmtree(_pipeline_cache, ignore_errors=True)
        os.environ.pop("P4INA_PIPELINE_CACHE", None)


def bmv2_missing() -> list[str]:
    return [b for b in BMV2_BINARIES if shutil.which(b) is None]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    is_root = os.geteuid() == 0
    missing = bmv2_missing()
    for item in items:
        if "root" in item.keywords and not is_root:  # a skip, and so (the policy) a failed run
            item.add_marker(pytest.mark.skip(reason="needs root for network namespaces and veth pairs"))
        if "bmv2" in item.keywords:
            _bmv2_items.add(item.nodeid)
            if missing:
                item.add_marker(
                    pytest.mark.skip(reason=f"real BMv2 not installed: {', '.join(missing)} not on PATH")
                )


def _reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A module skipped at collection (importorskip, allow_module_level) skips every test in it: never allowed."""
    if report.skipped:
        _bad_skips.append(f"{report.nodeid} (whole module): {_reason(report)}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and report.nodeid not in _bmv2_items:
        _bad_skips.append(f"{report.nodeid}: {_reason(report)}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    if _bad_skips:
        terminalreporter.section("skips outside the bmv2 tier (not allowed: docs/testing.md)", sep="=", red=True)
        for line in _bad_skips:
            terminalreporter.line(line, red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _bad_skips and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    return CONFORMANCE
