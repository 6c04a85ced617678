"""p4src/p4ina.p4 compiles with the real p4c-bm2-ss, and the P4Info it writes has the same names and ids as the
embedded compiler's (the controller must not tell the targets apart)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "target"))

pytestmark = pytest.mark.bmv2


def test_p4c_compiles_p4ina(tmp_path: Path) -> None:
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    p4c = shutil.which("p4c-bm2-ss")
    assert p4c is not None
    info_path = tmp_path / "p4ina.p4info.txtpb"
    subprocess.run([p4c, "--arch", "v1model", "--p4runtime-files", str(info_path), "-o", str(tmp_path / "p4ina.json"),
                    str(REPO / "p4src" / "p4ina.p4")], check=True, capture_output=True, text=True)
    real = text_format.Parse(info_path.read_text(), p4info_pb2.P4Info())
    from aggnet import compiled_program

    ours, _ = compiled_program()

    def names(info: p4info_pb2.P4Info) -> set[tuple[str, int]]:
        return {(x.preamble.name, x.preamble.id) for group in (info.tables, info.counters, info.registers)
                for x in group}

    assert names(ours) == names(real)
