"""Device config -> a program the switch can run: validate, compile with the switch's own compiler, check P4Info.

The switch never executes anything that arrived in a config. It compiles the config's preprocessed P4 text with
preprocessing disabled (`compiler.compile_preprocessed`), audits the module its own code generator wrote
(`codegen.audit`), and byte-compiles it. Results, failures included, are cached in memory by the program's
SHA-256 and name (a P4Runtime VERIFY followed by a COMMIT, a reconnecting controller, or the same program pushed
again compile once; successes also on disk, `pipeline_cache.py`, for the next switch process), and the P4Info in the request must equal the one the switch compiled: a P4Info that does not
describe the program would make every later P4Runtime write mean something else.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from types import CodeType

from p4.config.v1 import p4info_pb2

from p4switch import device_config, pipeline_cache
from p4switch.codegen.audit import GeneratedCodeError, compile_generated
from p4switch.codegen.vector import options_key
from p4switch.exceptions import CompileError, DeviceConfigError

CACHE_SIZE = 16


@dataclass(frozen=True)
class LoadedProgram:
    """A compiled device config: its P4Info, the static data for the runtime state, the audited module code."""

    name: str
    p4info: p4info_pb2.P4Info
    runtime_config: dict
    code: CodeType
    program_sha256: str


_cache: OrderedDict[tuple[str, str, str], LoadedProgram | str] = OrderedDict()
_lock = threading.Lock()
#: How programs were obtained in this process: compiled, or read from the on-disk cache (tests read these).
stats = {"compiled": 0, "disk": 0}


def _from_disk(config: device_config.DeviceConfig) -> LoadedProgram | None:
    entry = pipeline_cache.load(config.program_sha256, config.name)
    if entry is None:
        return None
    try:
        code = compile_generated(entry["python"], f"<pipeline {config.name}>")
        p4info = p4info_pb2.P4Info.FromString(entry["p4info"])
    except Exception:  # an entry that fails the audit or does not decode is ignored: compile instead
        return None
    stats["disk"] += 1
    return LoadedProgram(config.name, p4info, entry["runtime_config"], code, config.program_sha256)


def _compile(config: device_config.DeviceConfig) -> LoadedProgram:
    from p4switch.compiler import compile_preprocessed

    cached = _from_disk(config)
    if cached is not None:
        return cached
    stats["compiled"] += 1
    try:
        compiled = compile_preprocessed(config.program, config.name)
    except CompileError as exc:
        first = exc.diagnostics[0] if exc.diagnostics else None
        where = f"{first.location.line}:{first.location.column}: " if first is not None else ""
        more = f" (and {len(exc.diagnostics) - 1} more)" if len(exc.diagnostics) > 1 else ""
        message = first.message if first is not None else str(exc)
        raise DeviceConfigError(f"the device config's program does not compile: {where}{message}{more}") from None
    except RecursionError:
        raise DeviceConfigError("the device config's program is nested too deeply to compile") from None
    try:
        code = compile_generated(compiled.python_source, f"<pipeline {config.name}>")
    except (SyntaxError, GeneratedCodeError) as exc:
        raise DeviceConfigError(f"generated code for {config.name} refused: {exc}") from None
    pipeline_cache.store(config.program_sha256, config.name, compiled.python_source,
                         compiled.p4info.SerializeToString(), compiled.runtime_config)
    return LoadedProgram(config.name, compiled.p4info, compiled.runtime_config, code, config.program_sha256)


def compile_config(config: device_config.DeviceConfig) -> LoadedProgram:
    """The compiled program of a validated config (cached; a cached failure raises its error again)."""
    key = (config.program_sha256, config.name, options_key())
    with _lock:
        hit = _cache.get(key)
        if hit is None:
            try:
                hit = _compile(config)
            except DeviceConfigError as exc:
                hit = str(exc)
            _cache[key] = hit
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
    if isinstance(hit, str):
        raise DeviceConfigError(hit)
    return hit


def _first_difference(got: p4info_pb2.P4Info, want: p4info_pb2.P4Info) -> str:
    for desc in p4info_pb2.P4Info.DESCRIPTOR.fields:
        if getattr(got, desc.name) != getattr(want, desc.name):
            return desc.name
    return "?"


def load(p4info: p4info_pb2.P4Info, raw: bytes) -> LoadedProgram:
    """Validate `raw`, compile its program and check `p4info` against it. Raises `DeviceConfigError`."""
    program = compile_config(device_config.parse(raw))
    if p4info != program.p4info:
        raise DeviceConfigError(
            f"the P4Info does not match the device config's program {program.name!r} (first difference: "
            f"{_first_difference(p4info, program.p4info)}); send the P4Info `p4ina compile` wrote with it")
    return program


def clear_cache() -> None:
    with _lock:
        _cache.clear()
