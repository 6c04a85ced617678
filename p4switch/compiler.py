"""The embedded target's compiler: P4_16 source -> P4Info + device config (generated Python and static data).

`compile_file` runs preprocess, parse, type check, elaborate, P4Info and code generation, and turns every failure
into a `CompileError` with located diagnostics. `write_outputs` writes `<name>.p4info.txtpb` (byte-compatible with
p4c's `--p4runtime-files`) and `<name>.json` (the device config; also the P4Runtime `p4_device_config` bytes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p4.config.v1 import p4info_pb2

from p4switch.bmv2limits import check_bmv2_limits
from p4switch.codegen import CodegenError, generate_module
from p4switch.exceptions import CompileError, Diagnostic, SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.consteval import to_unsigned
from p4switch.frontend.elaborate import Pipeline, elaborate, qualify
from p4switch.frontend.parser import parse_program
from p4switch.frontend.source import SourceManager
from p4switch.frontend.symbols import IdPrefix, SymbolError, SymbolTable
from p4switch.frontend.typecheck import TypedProgram, check_program
from p4switch.frontend.types import BitsT, BoolT, EnumT, P4Type, underlying, width_of
from p4switch.p4info import build_p4info, collect_symbols, to_text

DEVICE_CONFIG_FORMAT = "p4ina-v1model/1"


@dataclass
class CompiledProgram:
    """What `p4ina compile` produces: the program's name, its P4Info and the device config dict."""

    name: str
    p4info: p4info_pb2.P4Info
    device_config: dict[str, Any]

    @property
    def python_source(self) -> str:
        return str(self.device_config["python"])

    def device_config_bytes(self) -> bytes:
        return json.dumps(self.device_config, indent=1, sort_keys=False).encode()

    def p4info_text(self) -> str:
        return to_text(self.p4info)


def compile_file(path: str | os.PathLike[str], *, include_dirs: tuple[str, ...] | list[str] = (),
                 defines: Mapping[str, str | None] | None = None) -> CompiledProgram:
    """Compile one P4 file for the embedded v1model target; raises `CompileError` on any problem."""
    sources = SourceManager(tuple(include_dirs))
    program = parse_program(path, include_dirs, dict(defines or {}), sources=sources)
    name = Path(path).stem
    return compile_ast(program, name, sources)


def compile_text(text: str, name: str = "program", *, include_dirs: tuple[str, ...] | list[str] = (),
                 defines: Mapping[str, str | None] | None = None) -> CompiledProgram:
    """Compile P4 source held in memory (tests, tools)."""
    from p4switch.frontend.parser import parse_text

    sources = SourceManager(tuple(include_dirs))
    program = parse_text(text, f"{name}.p4", include_dirs, dict(defines or {}), sources=sources)
    return compile_ast(program, name, sources)


def compile_ast(program: ast.Program, name: str, sources: SourceManager) -> CompiledProgram:
    """Type check, elaborate, generate P4Info and code; a compiler bug becomes a located `CompileError` too."""
    try:
        return _compile_ast(program, name, sources)
    except CompileError:
        raise
    except Exception as exc:
        raise CompileError([Diagnostic(program.loc, f"internal compiler error: {type(exc).__name__}: {exc}")]) \
            from exc


def _compile_ast(program: ast.Program, name: str, sources: SourceManager) -> CompiledProgram:
    typed = check_program(program, line_of=sources.line_text)
    pipeline = elaborate(typed, line_of=sources.line_text)
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
        compile(python, f"<p4ina:{name}>", "exec")
    except SyntaxError as exc:  # a code generator bug; report it as a compiler error, not a traceback
        raise CompileError([Diagnostic(SourceLocation(name, 0, 0), f"internal error in generated code: {exc}")]) \
            from None
    config = {
        "format": DEVICE_CONFIG_FORMAT,
        "name": name,
        "python": python,
        "tables": table_config(pipeline, symbols),
        "registers": {r.name: {"bitwidth": r.type_spec.bitwidth, "signed": r.type_spec.kind == "int"}
                      for r in pipeline.model.registers},
        "field_lists": {str(k): v for k, v in pipeline.field_lists.items()},
        "errors": list(typed.error_codes),
        "controller_headers": {h.name: [[f.name, f.bitwidth] for f in h.fields]
                               for h in pipeline.model.controller_headers},
    }
    return CompiledProgram(name, p4info, config)


def write_outputs(compiled: CompiledProgram, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write `<name>.p4info.txtpb` and `<name>.json` into `out_dir` (created if needed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p4info_path = out / f"{compiled.name}.p4info.txtpb"
    config_path = out / f"{compiled.name}.json"
    p4info_path.write_text(compiled.p4info_text())
    config_path.write_bytes(compiled.device_config_bytes())
    return p4info_path, config_path


# ------------------------------------------------------------------------------------------------- const entries


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
        for entry in entries.entries:
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
            if entry.priority is not None:
                spec["priority"] = int(typed.consts.get(entry.priority, 0))
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


__all__ = ["CompiledProgram", "compile_file", "compile_text", "qualify", "write_outputs"]
