"""`p4ina run --values N`: which N a run compiles for, the links' MTU that N needs, and options checked up front."""

from __future__ import annotations

from pathlib import Path

import pytest
from p4fabric.exceptions import RunError
from p4fabric.runner import (
    EMBEDDED_DEFAULT_VALUES,
    FORMATS,
    Runner,
    RunOptions,
    link_mtu,
    pipeline_timeout,
    run_defines,
    run_slots,
    run_values,
)


def test_default_values_per_target() -> None:
    assert run_values("bmv2") == 64  # real BMv2 keeps the program's default
    assert run_values("embedded") == EMBEDDED_DEFAULT_VALUES == 2048


@pytest.mark.parametrize("n, mtu", [(32, None), (64, None), (256, None), (512, 9000), (1024, 9000), (2048, 9000)])
def test_mtu_follows_the_int32_packet(n: int, mtu: int | None) -> None:
    # IPv4 (20) + UDP (8) + aggregation header (24) + 4 bytes per value against Ethernet's 1500-byte MTU
    assert (20 + 8 + 24 + 4 * n > 1500) == (mtu is not None)
    assert link_mtu(n) == mtu


def test_wide_builds_get_a_longer_pipeline_deadline() -> None:
    assert pipeline_timeout(64) is None
    assert pipeline_timeout(256) == 120.0
    assert pipeline_timeout(2048) == 960.0


@pytest.mark.parametrize("n", [0, 100, 4096])
def test_unsupported_values_refused(tmp_path: Path, n: int) -> None:
    with pytest.raises(RunError, match=f"--values {n}"):
        RunOptions(topo="single,2", out=tmp_path, values=n).validate()


def test_the_embedded_target_builds_room_for_every_format_of_its_pool() -> None:
    """`run_defines`: three formats' jobs of the embedded default pool fit the register arrays it compiles; real
    BMv2 keeps the program's own AGG_SLOTS (only the values per packet are passed)."""
    assert run_defines("bmv2", 64) == {"AGG_VALUES": "64"}
    defines = run_defines("embedded", 2048)
    assert defines["AGG_VALUES"] == "2048"
    assert int(defines["AGG_SLOTS"]) >= len(FORMATS) * run_slots("embedded")
    assert run_slots("bmv2") == 64


def test_a_window_beyond_the_targets_default_pool_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    """Without `--slots` the pool is the target's (`run_slots`), so `--window` is checked against it when the run
    starts, before a fabric exists."""
    out = tmp_path / "out"
    runner = Runner(RunOptions(topo="single,2", out=out, window=run_slots("embedded") + 1), log=lambda _t: None)
    with pytest.raises(RunError, match=r"--window must be in 1\.\.the pool \(256 slots on embedded\), got 257"):
        runner.run()
    assert not out.exists()
