"""`p4ina compile` / `p4ina-p4c-bm2-ss` with p4c-bm2-ss's flags, as Makefiles (the P4 tutorials') call p4c.

Expected formats come from p4c's rules (control-plane/p4RuntimeSerializer.cpp: `.json` JSON, `.bin` binary, `.txt`
text, other suffixes an error; `--p4runtime-format` defaults to binary) and are checked by parsing each file with
protobuf's own parser for that format, not by comparing with our output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

PROGRAM = Path(__file__).resolve().parents[2] / "integration" / "tutorial" / "ipv4_fwd.p4"
TABLE = "FwdIngress.routes"


def p4c(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The console script's code path (`main_p4c_bm2_ss`), in a fresh interpreter like a Makefile's call."""
    code = "import sys; from p4switch.compile_cli import main_p4c_bm2_ss; sys.exit(main_p4c_bm2_ss(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def p4ina(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p4ina", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def tables_in(info: p4info_pb2.P4Info) -> list[str]:
    return [t.preamble.name for t in info.tables]


def as_text(path: Path) -> p4info_pb2.P4Info:
    return text_format.Parse(path.read_text(), p4info_pb2.P4Info())


def test_tutorial_makefile_form(tmp_path: Path) -> None:
    """utils/Makefile of p4lang/tutorials: `$(P4C) --p4v 16 --p4runtime-files build/X.p4.p4info.txtpb
    -o build/X.json X.p4`; silent on success like p4c-bm2-ss."""
    (tmp_path / "build").mkdir()
    result = p4c("--p4v", "16", "--p4runtime-files", "build/ipv4_fwd.p4.p4info.txtpb", "-o", "build/ipv4_fwd.json",
                 str(PROGRAM), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert sorted(p.name for p in (tmp_path / "build").iterdir()) == ["ipv4_fwd.json", "ipv4_fwd.p4.p4info.txtpb"]
    assert TABLE in tables_in(as_text(tmp_path / "build" / "ipv4_fwd.p4.p4info.txtpb"))
    assert json.loads((tmp_path / "build" / "ipv4_fwd.json").read_text())["format"].startswith("p4ina-v1model/")


def test_p4runtime_files_formats_follow_the_suffix(tmp_path: Path) -> None:
    result = p4c("--p4runtime-files", "out/a.txt,out/b.bin,out/c.json", "-o", "out/prog.json", str(PROGRAM),
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = as_text(tmp_path / "out" / "a.txt")
    binary = p4info_pb2.P4Info()
    binary.ParseFromString((tmp_path / "out" / "b.bin").read_bytes())
    from_json = json_format.Parse((tmp_path / "out" / "c.json").read_text(), p4info_pb2.P4Info())
    assert text == binary == from_json
    assert TABLE in tables_in(text)
    assert json.loads((tmp_path / "out" / "c.json").read_text())["pkgInfo"]["arch"] == "v1model"
    # -o FILE.json with P4Runtime files asked for: no extra P4Info next to the config
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.txt", "b.bin", "c.json", "prog.json"]


@pytest.mark.parametrize("name", ["x.pb", "noext"])
def test_unknown_p4runtime_suffix_is_an_error(tmp_path: Path, name: str) -> None:
    result = p4c("--p4runtime-files", name, "-o", "prog.json", str(PROGRAM), cwd=tmp_path)
    assert result.returncode == 1
    assert name in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "prog.json").exists()  # checked before compiling


def test_older_p4runtime_file_and_format(tmp_path: Path) -> None:
    """`--p4runtime-file F --p4runtime-format text` (PI's and older tutorials' Makefiles); without a format p4c
    writes binary."""
    result = p4ina("compile", "--target", "bmv2", "--arch", "v1model", "--p4runtime-file", "t.p4info",
                   "--p4runtime-format", "text", "-o", "b/prog.json", str(PROGRAM), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert TABLE in tables_in(as_text(tmp_path / "t.p4info"))
    result = p4ina("compile", "--p4runtime-file", "bin.p4info", "-o", "b2", str(PROGRAM), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    binary = p4info_pb2.P4Info()
    binary.ParseFromString((tmp_path / "bin.p4info").read_bytes())
    assert TABLE in tables_in(binary)
    assert (tmp_path / "b2" / "ipv4_fwd.json").exists()  # -o without .json stays a directory


def test_output_file_without_p4runtime_files_gets_the_switch_sidecar(tmp_path: Path) -> None:
    result = p4ina("compile", "-o", "deep/dir/prog.json", str(PROGRAM), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "deep" / "dir"
    assert sorted(p.name for p in out.iterdir()) == ["prog.json", "prog.p4info.txtpb"]
    assert TABLE in tables_in(as_text(out / "prog.p4info.txtpb"))


def test_include_and_define_flags(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "sizes.p4").write_text("#define ROUTES 64\n")
    src = tmp_path / "prog.p4"
    src.write_text(PROGRAM.read_text().replace("#include <v1model.p4>", "#include <v1model.p4>\n#include \"sizes.p4\"\n"
                                               "#ifndef WITH_FLAG\n#error WITH_FLAG missing\n#endif")
                   .replace("size = 256;", "size = ROUTES;"))
    result = p4c("-I", "inc", "-D", "WITH_FLAG=1", "--p4runtime-files", "p.txt", "-o", "prog.json", str(src),
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    routes = [t for t in as_text(tmp_path / "p.txt").tables if t.preamble.name == TABLE]
    assert routes[0].size == 64
    missing = p4c("-I", "inc", "-o", "prog2.json", str(src), cwd=tmp_path)
    assert missing.returncode == 1 and "WITH_FLAG missing" in missing.stderr


@pytest.mark.parametrize(("flags", "word"), [
    (["--p4v", "14"], "P4_14"),
    (["--std", "p4-14"], "P4_14"),
    (["--arch", "psa"], "v1model"),
    (["--target", "tofino"], "bmv2"),
])
def test_unsupported_language_target_or_arch(tmp_path: Path, flags: list[str], word: str) -> None:
    result = p4c(*flags, "-o", "prog.json", str(PROGRAM), cwd=tmp_path)
    assert result.returncode == 1
    assert word in result.stderr and "Traceback" not in result.stderr


def test_p4v_equals_form_and_std(tmp_path: Path) -> None:
    result = p4c("--p4v=16", "--std", "p4-16", "--p4runtime-files", "p.txtpb", "-o", "prog.json", str(PROGRAM),
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "p.txtpb").exists()


def test_p4c_driver_form_of_runptf(tmp_path: Path) -> None:
    """The tutorials' runptf.sh calls the `p4c` driver: `--target bmv2 --arch v1model --p4runtime-files
    build/X.p4info.txtpb -o build X.p4`, where `-o` is a directory that gets build/X.json."""
    result = p4c("--target", "bmv2", "--arch", "v1model", "--p4runtime-files", "build/basic.p4info.txtpb", "-o",
                 "build", str(PROGRAM), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "build" / "ipv4_fwd.json").exists()
    assert TABLE in tables_in(as_text(tmp_path / "build" / "basic.p4info.txtpb"))
