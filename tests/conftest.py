"""Test tiers (see docs/testing.md): unit and target tests always run; root tests need root and the kernel
features they use; bmv2 tests need the real binaries. Skips always say why."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFORMANCE = REPO / "tests" / "conformance"

BMV2_BINARIES = ("p4c-bm2-ss", "simple_switch_grpc")


def bmv2_missing() -> list[str]:
    return [b for b in BMV2_BINARIES if shutil.which(b) is None]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    is_root = os.geteuid() == 0
    missing = bmv2_missing()
    for item in items:
        if "root" in item.keywords and not is_root:
            item.add_marker(pytest.mark.skip(reason="needs root for network namespaces and veth pairs"))
        if "bmv2" in item.keywords and missing:
            item.add_marker(
                pytest.mark.skip(reason=f"real BMv2 not installed: {', '.join(missing)} not on PATH")
            )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    return CONFORMANCE
