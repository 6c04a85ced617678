"""The embedded target's compiler: P4_16 source -> P4Info + device config (the preprocessed program, as data).

`compile_file` runs preprocess, parse, type check, elaborate, P4Info and code generation, and turns every failure
into a `CompileError` with located diagnostics. `write_outputs` writes `<name>.p4info.txtpb` (byte-compatible with
p4c's `--p4runtime-files`) and `<name>.json`, the device config (also the P4Runtime `p4_device_config` bytes): the
fully preprocessed program text and metadata, never code (docs/security.md). The switch compiles that text itself
with `compile_preprocessed`, which refuses every preprocessing directive.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4.config.v1 import p4info_pb2

from p4switch.bmv2limits import check_before_elaboration, check_before_typecheck, check_bmv2_limits
from p4switch.codegen import CodegenError, generate_module
from p4switch.codegen.audit import GeneratedCodeError, audit_generated
from p4switch.exceptions import CompileError, Diagnostic, SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.consteval import to_unsigned
from p4switch.frontend.elaborate import Pipeline, elaborate, qualify
from p4switch.frontend.entrypriorities import entry_priorities
from p4switch.frontend.lexer import Token
from p4switch.frontend.parser import parse_tokens
from p4switch.frontend.preprocessed import parser_view, render, text_parser_view, tokens_of
from p4switch.frontend.preprocessor import Preprocessor
from p4switch.frontend.source import SourceManager
from p4switch.frontend.symbols import IdPrefix, SymbolError, SymbolTable
from p4switch.frontend.typecheck import TypedProgram, check_program
from p4switch.frontend.types import BitsT, BoolT, EnumT, P4Type, underlying, width_of
from p4switch.p4info import build_p4info, collect_symbols, to_text

#: The device config's format tag; "p4ina-v1model/1" carried generated Python and is refused by the switch.
DEVICE_CONFIG_FORMAT = "p4ina-v1model/2"


@dataclass
class CompiledProgram:
    """What `p4ina compile` produces: the program's name, its P4Info, the generated pipeline module, the static data
    the runtime state needs beyond P4Info (`runtime_config`) and the preprocessed program text."""

    name: str
    p4info: p4info_pb2.P4Info
    python_source: str
    runtime_config: dict[str, Any]
    program_text: str = ""
    defines: dict[str, str | None] = field(default_factory=dict)

    @property
    def device_config(self) -> dict[str, Any]:
        """The device config as data (docs/compiler.md): what the switch needs to compile the program itself."""
        config: dict[str, Any] = {
            "format": DEVICE_CONFIG_FORMAT,
            "name": self.name,
            "program": self.program_text,
            "program_sha256": hashlib.sha256(self.program_text.encode()).hexdigest(),
            "compiler": "p4ina",
        }
        if self.defines:
            config["defines"] = dict(self.defines)
        return config

    def device_config_bytes(self) -> bytes:
        return json.dumps(self.device_config, indent=1, sort_keys=False).encode()

    def p4info_text(self) -> str:
        return to_text(self.p4info)


class _CollectorPause:
    """Python's cyclic garbage collector off while a compilation runs (nested and concurrent compilations
    included), back on after the last one if it was on before. A wide program allocates millions of tokens and
    nodes and frees almost none of them in cycles: each full collection walked them all (16% of compiling p4ina.p4
    at 2048 values) to find a few hundred objects."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._active == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._active += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0 and self._was_enabled:
                gc.enable()


_collector_paused = _CollectorPause()


def compile_file(path: str | os.PathLike[str], *, include_dirs: tuple[str, ...] | list[str] = (),
                 defines: Mapping[str, str | None] | None = None,
                 sources: SourceManager | None = None) -> CompiledProgram:
    """Compile one P4 file for the embedded v1model target; raises `CompileError` on any problem. A caller that
    passes `sources` (made with the same include dirs) learns from it which files the program was read from."""
    with _collector_paused:
        sources = sources or SourceManager(tuple(include_dirs))
        tokens = Preprocessor(sources, defines).process_file(os.fspath(path))
        return _compile_tokens(tokens, Path(path).stem, sources, dict(defines or {}))


def compile_text(text: str, name: str = "program", *, include_dirs: tuple[str, ...] | list[str] = (),
                 defines: Mapping[str, str | None] | None = None, p4c_checks: bool = True) -> CompiledProgram:
    """Compile P4 source held in memory (tests, tools); `#include <core.p4>` works as in a file. `p4c_checks=False`
    skips the p4c-bm2-ss parity checks (bmv2limits), for tests of P4_16 semantics BMv2 cannot run (a `for`-in)."""
    with _collector_paused:
        sources = SourceManager(tuple(include_dirs))
        tokens = Preprocessor(sources, defines).process_text(text, f"{name}.p4")
        return _compile_tokens(tokens, name, sources, dict(defines or {}), p4c_checks=p4c_checks)


def compile_preprocessed(text: str, name: str) -> CompiledProgram:
    """Compile preprocessed program text (a device config's `program`) with preprocessing disabled: no
    `#include`, no macros, no other directive. What the switch runs on a pushed config."""
    with _collector_paused:
        sources = SourceManager(())
        filename = f"{name}.p4"
        sources.add_text(filename, text)
        tokens = tokens_of(text, filename)
        program = parse_tokens(tokens, sources)
        # p4c-parity checks (bmv2limits) are skipped: they tell core.p4/v1model.p4 declarations apart by file, which
        # one preprocessed text no longer records; `p4ina compile` ran them when it made the config, and the code
        # generator refuses on its own whatever this target cannot run.
        compiled = compile_ast(program, name, sources, p4c_checks=False)
        compiled.program_text = text
        return compiled


def _compile_tokens(tokens: list[Token], name: str, sources: SourceManager,
                    defines: dict[str, str | None], *, p4c_checks: bool = True) -> CompiledProgram:
    """Compile a preprocessed token stream and keep its text for the device config, checking that the text lexes
    back to what the parser saw (else the switch would compile a different program)."""
    program = parse_tokens(tokens, sources)
    compiled = compile_ast(program, name, sources, p4c_checks=p4c_checks)
    text = render(tokens)
    if text_parser_view(text, f"{name}.p4") != parser_view(tokens):  # = parser_view(tokens_of(text, ...))
        raise CompileError([Diagnostic(SourceLocation(name, 0, 0),
                                       "internal error: the preprocessed program text does not lex back to its tokens")])
    compiled.program_text = text
    compiled.defines = defines
    return compiled


def compile_ast(program: ast.Program, name: str, sources: SourceManager, *,
                p4c_checks: bool = True) -> CompiledProgram:
    """Type check, elaborate, generate P4Info and code; a compiler bug becomes a located `CompileError` too."""
    try:
        return _compile_ast(program, name, sources, p4c_checks=p4c_checks)
    except CompileError:
        raise
    except Exception as exc:
        raise CompileError([Diagnostic(program.loc, f"internal compiler error: {type(exc).__name__}: {exc}")]) \
            from exc


def _compile_ast(program: ast.Program, name: str, sources: SourceManager, *, p4c_checks: bool) -> CompiledProgram:
    if p4c_checks:  # p4c's front-end errors that come before its type checker's and elaboration's
        check_before_typecheck(program, line_of=sources.line_text)
    typed = check_program(program, line_of=sources.line_text)
    if p4c_checks:
        check_before_elaboration(typed, line_of=sources.line_text)
    pipeline = elaborate(typed, line_of=sources.line_text)
    if p4c_checks:
        check_bmv2_limits(pipeline, line_of=sources.line_text)  # what p4c-bm2-ss rejects, rejected here too
    try:
        symbols = collect_symbols(pipeline.model)
    except SymbolError as exc:
        raise CompileError([Diagnostic(program.loc, str(exc))]) from None
    p4info = build_p4info(pipeline.model)
    try:
        python = generate_module(pipeline, symbols)
    except CodegenError as exc:
        loc = getattr(exc.node, "loc", program.loc)
        raise CompileError([sources.diagnostic(loc, str(exc))]) from None
    try:
        audit_generated(python)
    except SyntaxError as exc:  # a code generator bug; report it as a compiler error, not a traceback
        raise CompileError([Diagnostic(SourceLocation(name, 0, 0), f"internal error in generated code: {exc}")]) \
            from None
    except GeneratedCodeError as exc:
        raise CompileError([Diagnostic(SourceLocation(name, 0, 0), f"generated code refused: {exc}")]) from None
    runtime_config = {
        "name": name,
        "tables": table_config(pipeline, symbols),
        "registers": {r.name: {"bitwidth": r.type_spec.bitwidth, "signed": r.type_spec.kind == "int"}
                      for r in pipeline.model.registers},
        "field_lists": {str(k): v for k, v in pipeline.field_lists.items()},
        "errors": list(typed.error_codes),
        "controller_headers": {h.name: [[f.name, f.bitwidth] for f in h.fields]
                               for h in pipeline.model.controller_headers},
    }
    return CompiledProgram(name, p4info, python, runtime_config)


def write_outputs(compiled: CompiledProgram, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write `<name>.p4info.txtpb` and `<name>.json` into `out_dir` (created if needed)."""
    return write_files(compiled.name, compiled.p4info_text(), compiled.device_config_bytes(), out_dir)


def write_files(name: str, p4info_text: str, device_config: bytes,
                out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """`write_outputs` for outputs already rendered (`compile_cache` keeps them as text)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p4info_path = out / f"{name}.p4info.txtpb"
    config_path = out / f"{name}.json"
    p4info_path.write_text(p4info_text)
    config_path.write_bytes(device_config)
    return p4info_path, config_path


def table_config(pipeline: Pipeline, symbols: SymbolTable) -> dict[str, Any]:
    """Per table: the initial default action and the const entries in source order (the runtime state's format)."""
    typed = pipeline.typed
    out: dict[str, Any] = {}
    for table_model in pipeline.model.tables:
        default = table_model.default_action
        if default is not None and symbols.has(IdPrefix.ACTION, default.action):
            out.setdefault(table_model.name, {})["default_action"] = {
                "action_id": symbols.id_of(IdPrefix.ACTION, default.action),
                "args": [to_unsigned(v, w) for v, w in default.args],
                "const": default.is_const,
            }
    for (_prefix, table), name in pipeline.table_names.items():
        props = {p.name: p for p in table.properties}
        entries = props.get("entries")
        if not isinstance(entries, ast.EntriesProperty):
            continue
        key = props.get("key")
        elements = key.elements if isinstance(key, ast.KeyProperty) else ()
        specs = []
        priorities = entry_priorities(table, entries, typed.consts.get)  # checked by the type checker
        for entry, priority in zip(entries.entries, priorities, strict=True):
            keyset = entry.keyset
            if isinstance(keyset, ast.TupleKeyset):
                items = list(keyset.elements)
            elif isinstance(keyset, ast.ListExpression) and len(elements) > 1:
                items = list(keyset.items)
            else:
                items = [keyset]
            match = [_match_spec(typed, item, ke.match_kind, typed.types.get(ke.expr))
                     for item, ke in zip(items, elements, strict=False)]
            action = typed.refs.get(entry.action)
            action_name = pipeline.action_names.get(action) if action is not None else None
            action_id = symbols.id_of(IdPrefix.ACTION, action_name) if action_name else 0
            args = []
            if isinstance(action, ast.ActionDeclaration) and entry.action.args is not None:
                for p, a in zip(action.params, entry.action.args, strict=False):
                    if p.direction is None:
                        var = typed.decl_vars.get(p)
                        args.append(_const_int(typed.consts.get(a.value), var.type if var else None))
            spec: dict[str, Any] = {"match": match, "action_id": action_id, "args": args}
            if priority is not None:
                spec["priority"] = priority
            specs.append(spec)
        out.setdefault(name, {})["const_entries"] = specs
    return out


def _const_int(value: Any, t: P4Type | None) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        u = underlying(t) if t is not None else None
        return to_unsigned(value, u.width) if isinstance(u, BitsT) else value
    if isinstance(value, tuple) and value and value[0] == "enum" and isinstance(t, EnumT):
        return t.members.index(value[2])
    return 0


def _match_spec(typed: TypedProgram, item: ast.Expression, kind: str, t: P4Type | None) -> dict[str, int] | None:
    if isinstance(item, (ast.DontCare, ast.DefaultExpression)):
        return None
    width = width_of(t) if t is not None else None
    if isinstance(underlying(t) if t is not None else None, BoolT):
        width = 1
    if isinstance(item, ast.BinaryOp) and item.op == "&&&":
        value = _const_int(typed.consts.get(item.left), t)
        mask = _const_int(typed.consts.get(item.right), t)
        return {"value": value & mask, "mask": mask}
    if isinstance(item, ast.BinaryOp) and item.op == "..":
        return {"low": _const_int(typed.consts.get(item.left), t), "high": _const_int(typed.consts.get(item.right), t)}
    value = _const_int(typed.consts.get(item), t)
    if kind == "lpm" and width:
        return {"value": value, "prefix_len": width}
    return {"value": value}


__all__ = ["DEVICE_CONFIG_FORMAT", "CompiledProgram", "compile_file", "compile_preprocessed", "compile_text", "qualify",
           "write_files", "write_outputs"]
