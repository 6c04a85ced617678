"""Fake BMv2 binaries on PATH: they record their argv (and stdin) into a JSON-lines file the tests read back."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKES = Path(__file__).parent / "fakes"


class Recorder:
    def __init__(self, path: Path) -> None:
        self.path = path

    def calls(self, prog: str | None = None) -> list[dict[str, object]]:
        if not self.path.exists():
            return []
        rows = [json.loads(line) for line in self.path.read_text().splitlines()]
        return [r for r in rows if prog is None or r["prog"] == prog]


@pytest.fixture
def fake_bmv2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for fake in FAKES.iterdir():
        if fake.name.startswith(("_", ".")):
            continue
        target = bindir / fake.name
        target.write_text(f"#!{sys.executable}\n" + fake.read_text())
        target.chmod(0o755)
    record = tmp_path / "calls.jsonl"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_RECORD", str(record))
    yield Recorder(record)


@pytest.fixture
def no_bmv2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH holding only the basics, so no BMv2 binary is found even on a machine that has one."""
    bindir = tmp_path / "emptybin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))
