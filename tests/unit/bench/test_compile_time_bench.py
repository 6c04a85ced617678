"""bench/compile_time.py: one `p4ina compile` process per size, its CPU from the child's rusage, and the digests of
what it wrote (checked against an in-process compile of the same program)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bench import compile_time
from p4switch.compiler import compile_file


def test_compile_once_measures_a_real_compile_and_digests_its_outputs(tmp_path: Path) -> None:
    row = compile_time.compile_once(64, tmp_path / "64")
    compiled = compile_file(compile_time.PROGRAM, defines={"AGG_VALUES": "64"})
    assert row["outputs_sha256"] == {
        "p4ina.json": hashlib.sha256(compiled.device_config_bytes()).hexdigest(),
        "p4ina.p4info.txtpb": hashlib.sha256(compiled.p4info_text().encode()).hexdigest(),
    }
    assert row["values"] == 64
    assert row["cpu_s"] > 0 and row["peak_rss_mb"] > 0
