"""`compile_file`'s outputs (P4Info text and device config), cached on disk for the runs that compile the same
program again and again.

Every `p4ina run` compiles p4src/p4ina.p4 before it builds its fabric: about 13 s of CPU at 2048 values per packet,
for a program that changes far less often than the experiment. An entry is found by what the caller asks for (the
compiler's own sources, including its p4c-parity checks, the vectoriser options, the program's path, the include
folders, the defines) and used only if what the compilation read is unchanged: every file it loaded has the same
SHA-256, and every include candidate it looked at is still a file or still absent (so a header that would now
shadow another, earlier on the search path, is noticed), as a compiler cache's manifest does. Only successful
compilations are stored; a failing program is compiled, and reported, every time.

Entries live in the switches' pipeline cache directory, with its ownership, mode and `P4INA_PIPELINE_CACHE`
rules (`pipeline_cache.py`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from p4switch import pipeline_cache
from p4switch.compiler import compile_file, write_files
from p4switch.frontend.source import SourceManager

_PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class CompileOutputs:
    """What `p4ina compile` writes for a program: its name, P4Info text and device config bytes."""

    name: str
    p4info_text: str
    device_config: bytes
    cached: bool  # True when read from the cache (no compilation ran)


@functools.cache
def _fingerprint() -> str:
    """The pipeline cache's compiler fingerprint plus the p4c-parity checks, which decide acceptance here."""
    return pipeline_cache.sources_digest(list((_PACKAGE / "bmv2limits").rglob("*.py")),
                                         seed=pipeline_cache.compiler_fingerprint())


def _request_key(source: Path, include_dirs: Sequence[str], defines: Mapping[str, str | None]) -> str:
    from p4switch.codegen.vector import options_key

    request = json.dumps([_fingerprint(), options_key(), os.path.abspath(source),
                          [os.path.abspath(d) for d in include_dirs], sorted(defines.items(), key=lambda kv: kv[0])])
    return hashlib.sha256(request.encode()).hexdigest()


def _sha256_of(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _still_valid(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    files, probed = entry.get("files"), entry.get("probed")
    if not (isinstance(files, dict) and isinstance(probed, dict) and files
            and isinstance(entry.get("name"), str) and isinstance(entry.get("p4info"), str)
            and isinstance(entry.get("device_config"), str)):
        return False
    if any(os.path.isfile(path) != bool(was_file) for path, was_file in probed.items()):
        return False
    return all(_sha256_of(path) == digest for path, digest in files.items())


def compile_cached(source: Path, *, include_dirs: Sequence[str] = (),
                   defines: Mapping[str, str | None] | None = None) -> CompileOutputs:
    """`compile_file(source, ...)`'s outputs, from the cache when nothing it read has changed. Raises
    `CompileError` as `compile_file` does."""
    defines = dict(defines or {})
    base = pipeline_cache.cache_dir()
    path = base / f"compiled-{_request_key(source, include_dirs, defines)}.json" if base is not None else None
    if path is not None:
        entry = pipeline_cache.read_private_json(path)
        if _still_valid(entry):
            return CompileOutputs(entry["name"], entry["p4info"], entry["device_config"].encode(), cached=True)
    sources = SourceManager(tuple(include_dirs))
    compiled = compile_file(source, include_dirs=tuple(include_dirs), defines=defines, sources=sources)
    outputs = CompileOutputs(compiled.name, compiled.p4info_text(), compiled.device_config_bytes(), cached=False)
    if path is not None:
        files = {os.path.abspath(f): _sha256_of(f) for f in sources.files_read()}
        if all(files.values()):  # a file that vanished meanwhile: nothing to key on, so nothing stored
            pipeline_cache.write_private_json(path, {
                "name": outputs.name, "p4info": outputs.p4info_text, "device_config": outputs.device_config.decode(),
                "files": files, "probed": sources.probed})
    return outputs


def write_outputs(outputs: CompileOutputs, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write `<name>.p4info.txtpb` and `<name>.json` into `out_dir`, as `compiler.write_outputs` does."""
    return write_files(outputs.name, outputs.p4info_text, outputs.device_config, out_dir)
