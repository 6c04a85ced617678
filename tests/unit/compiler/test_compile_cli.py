"""`p4ina compile` through the real command line: outputs on success, diagnostics and exit status 1 on errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from p4switch.compiler import compile_preprocessed

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"


def p4ina(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p4ina", *args], capture_output=True, text=True, timeout=120)


def test_compile_writes_p4info_and_device_config(tmp_path: Path) -> None:
    result = p4ina("compile", str(CONFORMANCE / "programs" / "tables.p4"), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "tables.p4info.txtpb").read_text() == (CONFORMANCE / "p4info" / "tables.p4info.txtpb").read_text()
    config = json.loads((tmp_path / "tables.json").read_text())
    assert config["format"] == "p4ina-v1model/2" and "python" not in config  # data, not code
    assert config["program_sha256"] == hashlib.sha256(config["program"].encode()).hexdigest()
    assert "#include" not in config["program"] and "control" in config["program"]  # preprocessed P4 text
    exact = compile_preprocessed(config["program"], config["name"]).runtime_config["tables"]["I.t_exact"]["const_entries"]
    assert [e["match"][0]["value"] for e in exact] == [1, 2, 0xBEEF]  # source order


def test_bad_program_gives_diagnostic_and_status_1(tmp_path: Path) -> None:
    src = tmp_path / "bad.p4"
    src.write_text("#include <core.p4>\n#include <v1model.p4>\nconst bit<8> X = undefined_thing;\n")
    result = p4ina("compile", str(src), "-o", str(tmp_path))
    assert result.returncode == 1
    assert f"{src}:3:18: error: undefined_thing: declaration not found" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "bad.json").exists()


def test_defines_and_include_dirs(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "width.p4").write_text("#define W 16\n")
    src = tmp_path / "d.p4"
    src.write_text((CONFORMANCE / "programs" / "arith.p4").read_text().replace(
        "#include <v1model.p4>", "#include <v1model.p4>\n#include \"width.p4\"\n#ifndef FLAG\n#error FLAG\n#endif"))
    result = p4ina("compile", str(src), "-I", str(tmp_path / "inc"), "-D", "FLAG=1", "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "d.json").exists()


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    result = p4ina("compile", str(tmp_path / "nope.p4"), "-o", str(tmp_path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "nope.p4" in result.stderr
