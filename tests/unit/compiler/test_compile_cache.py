"""The cache of `compile_file`'s outputs (`p4switch/compile_cache.py`) that `p4ina run` compiles through: a hit
needs every file read unchanged and every include decision unchanged; anything else compiles again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from p4switch import compile_cache, compiler, pipeline_cache
from p4switch.exceptions import CompileError

PROGRAM = """#include <core.p4>
#include <v1model.p4>
#include "width.p4"
header h_t { bit<WIDTH> f; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t { key = { hdr.h.f: exact; } actions = { fwd; NoAction; } }
    apply { t.apply(); }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv(pipeline_cache.ENV, str(cache))
    src = tmp_path / "src"
    src.mkdir()
    (src / "width.p4").write_text("#define WIDTH 8\n")
    (src / "prog.p4").write_text(PROGRAM)
    return src / "prog.p4"


def _count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every real compilation behind the cache."""
    calls: list[Path] = []
    real = compiler.compile_file

    def counting(path, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(Path(path))
        return real(path, **kwargs)

    monkeypatch.setattr(compile_cache, "compile_file", counting)
    return calls


def _key_width(outputs: compile_cache.CompileOutputs) -> str:
    """The table key's bitwidth as the P4Info states it."""
    line = next(x for x in outputs.p4info_text.splitlines() if "bitwidth" in x)
    return line.split(":")[1].strip()


def test_second_compile_is_a_hit_with_the_same_outputs(program: Path, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    calls = _count_compiles(monkeypatch)
    first = compile_cache.compile_cached(program)
    second = compile_cache.compile_cached(program)
    assert len(calls) == 1 and not first.cached and second.cached
    direct = compiler.compile_file(program)
    assert second.p4info_text == direct.p4info_text() and second.device_config == direct.device_config_bytes()
    p4info_path, config_path = compile_cache.write_outputs(second, tmp_path / "out")
    assert p4info_path.name == "prog.p4info.txtpb" and config_path.read_bytes() == direct.device_config_bytes()
    entries = list(Path(os.environ[pipeline_cache.ENV]).glob("compiled-*.json"))
    assert len(entries) == 1 and entries[0].stat().st_mode & 0o777 == 0o600


def test_a_changed_include_compiles_again(program: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_compiles(monkeypatch)
    assert _key_width(compile_cache.compile_cached(program)) == "8"
    (program.parent / "width.p4").write_text("#define WIDTH 16\n")
    again = compile_cache.compile_cached(program)
    assert len(calls) == 2 and not again.cached and _key_width(again) == "16"


def test_a_header_that_now_shadows_another_compiles_again(program: Path, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    """`#include <core.p4>` looked in the -I folder first and found nothing; a core.p4 appearing there decides
    the include differently, so the entry must not be used (here the new core.p4 breaks the program)."""
    extra = tmp_path / "extra"
    extra.mkdir()
    calls = _count_compiles(monkeypatch)
    compile_cache.compile_cached(program, include_dirs=[str(extra)])
    assert compile_cache.compile_cached(program, include_dirs=[str(extra)]).cached
    (extra / "core.p4").write_text("this is not P4\n")
    with pytest.raises(CompileError):
        compile_cache.compile_cached(program, include_dirs=[str(extra)])
    assert len(calls) == 2


def test_defines_and_include_dirs_are_part_of_the_key(program: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    (program.parent / "width.p4").write_text("#ifndef WIDTH\n#define WIDTH 8\n#endif\n")
    calls = _count_compiles(monkeypatch)
    assert _key_width(compile_cache.compile_cached(program)) == "8"
    assert _key_width(compile_cache.compile_cached(program, defines={"WIDTH": "32"})) == "32"
    assert compile_cache.compile_cached(program, defines={"WIDTH": "32"}).cached
    assert not compile_cache.compile_cached(program, include_dirs=[str(tmp_path)]).cached
    assert len(calls) == 3


def test_failures_are_not_stored_and_a_damaged_entry_is_a_miss(program: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_compiles(monkeypatch)
    program.write_text(PROGRAM.replace("t.apply();", "t.apply(); t.apply();"))  # p4c: multiple successors
    for _ in range(2):
        with pytest.raises(CompileError):
            compile_cache.compile_cached(program)
    assert len(calls) == 2 and not list(Path(os.environ[pipeline_cache.ENV]).glob("compiled-*.json"))
    program.write_text(PROGRAM)
    compile_cache.compile_cached(program)
    (entry,) = Path(os.environ[pipeline_cache.ENV]).glob("compiled-*.json")
    entry.write_text("{\"name\": 3}")
    assert not compile_cache.compile_cached(program).cached
    entry.chmod(0o644)  # another user could have written it: never read
    assert not compile_cache.compile_cached(program).cached


def test_cache_off_compiles_every_time(program: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pipeline_cache.ENV, "off")
    calls = _count_compiles(monkeypatch)
    compile_cache.compile_cached(program)
    assert not compile_cache.compile_cached(program).cached and len(calls) == 2
