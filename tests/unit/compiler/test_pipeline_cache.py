"""The on-disk cache of compiled device configs (`p4switch/pipeline_cache.py`) as the switch's loader uses it:
a second process reads the entry instead of compiling, and an entry that is not private or fails the audit is
ignored (the switch compiles instead and runs nothing from it)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4switch import device_loader, pipeline_cache
from p4switch.compiler import compile_text

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout hs h, inout m_t m) { apply { } }
control I(inout hs h, inout m_t m, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table t { key = { h.h.a: exact; } actions = { to; } default_action = to(CACHE_PORT); }
    apply { t.apply(); }
}
control E(inout hs h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs h, inout m_t m) { apply { } }
control D(packet_out p, in hs h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / "cache"
    monkeypatch.setenv(pipeline_cache.ENV, str(directory))
    device_loader.clear_cache()
    yield directory
    device_loader.clear_cache()


def counts() -> tuple[int, int]:
    return device_loader.stats["compiled"], device_loader.stats["disk"]


def test_a_second_process_reads_the_entry_instead_of_compiling(cache: Path) -> None:
    program = compile_text(PROGRAM.replace("CACHE_PORT", "5"), "cached")
    compiled0, disk0 = counts()
    first = device_loader.load(program.p4info, program.device_config_bytes())
    assert counts() == (compiled0 + 1, disk0)
    (entry,) = cache.iterdir()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700 and stat.S_IMODE(entry.stat().st_mode) == 0o600
    device_loader.clear_cache()  # what a new switch process starts with
    second = device_loader.load(program.p4info, program.device_config_bytes())
    assert counts() == (compiled0 + 1, disk0 + 1)
    assert second.p4info == first.p4info == program.p4info
    assert second.runtime_config["tables"] == json.loads(json.dumps(first.runtime_config["tables"]))


def test_entries_that_are_not_private_or_fail_the_audit_are_ignored(cache: Path, tmp_path: Path) -> None:
    program = compile_text(PROGRAM.replace("CACHE_PORT", "6"), "cached")
    device_loader.load(program.p4info, program.device_config_bytes())
    (entry,) = cache.iterdir()
    canary = tmp_path / "canary"
    hostile = json.loads(entry.read_text())
    hostile["python"] = f"import os\nos.system('touch {canary}')\ndef build(rt):\n    return None\n"
    entry.write_text(json.dumps(hostile))
    os.chmod(entry, 0o600)
    compiled0, disk0 = counts()
    device_loader.clear_cache()
    loaded = device_loader.load(program.p4info, program.device_config_bytes())  # audit refuses: compiled again
    assert counts() == (compiled0 + 1, disk0) and loaded.p4info == program.p4info
    os.chmod(entry, 0o644)  # the fresh entry, readable by others: not trusted
    device_loader.clear_cache()
    device_loader.load(program.p4info, program.device_config_bytes())
    assert counts() == (compiled0 + 2, disk0)
    assert not canary.exists()


def test_the_cache_directory_must_be_private(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert pipeline_cache.cache_dir() == cache
    os.chmod(cache, 0o770)
    assert pipeline_cache.cache_dir() is None
    monkeypatch.setenv(pipeline_cache.ENV, "off")
    assert pipeline_cache.cache_dir() is None


def test_the_oldest_entries_go_beyond_the_cap(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_cache, "MAX_ENTRIES", 2)
    for n in range(3):
        pipeline_cache.store(f"{n:064x}", "p", "x = 1\n", b"", {})
        os.utime(pipeline_cache._entry(cache, f"{n:064x}", "p"), (n, n))
    pipeline_cache.store(f"{9:064x}", "p", "x = 1\n", b"", {})
    assert pipeline_cache.load(f"{0:064x}", "p") is None and pipeline_cache.load(f"{1:064x}", "p") is None
    assert pipeline_cache.load(f"{2:064x}", "p") is not None and pipeline_cache.load(f"{9:064x}", "p") is not None
