"""Declarations p4c-bm2-ss refuses for BMv2: headers that are not a whole number of bytes
(`backends/bmv2/common/header.cpp`), a parser whose headers parameter is not a struct of headers, stacks and
unions (`backends/bmv2/simple_switch/simpleSwitch.cpp`), extern functions the program declares itself (BMv2 has
no code for them), and V1Switch blocks whose parameter directions differ from v1model's (p4c's type checker)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from p4switch.frontend import ast
from p4switch.frontend.elaborate import V1MODEL_ROLES, V1SWITCH_PARAMS, Pipeline, by_position, v1switch_block
from p4switch.frontend.source import SYSTEM_INCLUDE_DIR
from p4switch.frontend.typecheck import TypedProgram
from p4switch.frontend.types import (
    BitsT,
    BoolT,
    EnumT,
    HeaderT,
    HeaderUnionT,
    NewTypeT,
    P4Type,
    StackT,
    StructT,
    VarbitT,
    underlying,
)

from .index import CodeIndex
from .report import Reporter


def check_declarations(pipeline: Pipeline, index: CodeIndex, report: Reporter, *,
                       known_externs: set[int] | None = None) -> None:
    check_headers_param(pipeline, report)
    check_header_widths(pipeline, report)
    check_extern_functions(index, report, known_externs)
    check_action_params(pipeline, report)


def check_action_params(pipeline: Pipeline, report: Reporter) -> None:
    """BMv2 action data are bit strings (p4c's `ActionConverter::convertActionParams`; new types, serializable and
    plain enums are bits by then)."""
    for action in pipeline.action_names:
        for p in action.params:
            var = pipeline.typed.decl_vars.get(p)
            if p.direction is not None or var is None:
                continue
            t = underlying(var.type)
            if not isinstance(t, (BitsT, EnumT)):
                report.error_at_name(p.loc, p.name, f"{p.name}: action parameters must be bit<> or int<> on this "
                                                    f"target")


def check_header_widths(pipeline: Pipeline, report: Reporter) -> None:
    seen: set[str] = set()
    for t in _reachable_types(pipeline):
        if not isinstance(t, HeaderT) or t.name in seen or t.decl is None:
            continue
        seen.add(t.name)
        bits = _header_bits(t)
        if bits % 8:
            report.error_at_name(t.decl.loc, t.decl.name,
                                 f"header {t.decl.name}: Found header with fields totaling {bits} bits.  BMv2 target "
                                 f"only supports headers with fields totaling a multiple of 8 bits.")


def _header_bits(t: P4Type) -> int:
    """Bits as p4c's `HeaderConverter::addHeaderType` counts them: a varbit field at its maximum width, `error` and
    enums without a representation as 32 bits (nested structs are flattened before)."""
    if isinstance(t, (HeaderT, StructT)):
        return sum(_header_bits(ft) for _name, ft in t.fields)
    if isinstance(t, BitsT):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, NewTypeT):
        return _header_bits(t.base)
    if isinstance(t, EnumT):
        return t.underlying.width if t.underlying is not None else 32
    if isinstance(t, VarbitT):
        return t.max_width
    return 32


def _reachable_types(pipeline: Pipeline) -> list[P4Type]:
    """Every type some variable, parameter or field of the program has, nested types included."""
    out: list[P4Type] = []
    seen: set[int] = set()
    todo = [v.type for v in pipeline.typed.decl_vars.values() if v.type is not None]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        out.append(t)
        if isinstance(t, (StructT, HeaderT, HeaderUnionT)):
            todo.extend(ft for _, ft in t.fields)
        elif isinstance(t, StackT):
            todo.append(t.element)
    return out


def check_headers_param(pipeline: Pipeline, report: Reporter) -> None:
    parser = pipeline.blocks.get("parser")
    if parser is None or len(parser.decl.params) < 2:
        return
    param = parser.decl.params[1]
    var = pipeline.typed.decl_vars.get(param)
    name = param.type.name if isinstance(param.type, ast.NamedType) else type(param.type).__name__
    if not isinstance(param.type, ast.NamedType) or var is None or not isinstance(var.type, StructT):
        report.error(param.type.loc, f"{name}: expected type to be a struct")
    elif not _all_headers(var.type):
        report.error(param.type.loc, f"{name}: the type should be a struct of headers, stacks, or unions")


def _all_headers(t: StructT) -> bool:
    """After p4c flattens nested structs of the headers type, every field is a header, a stack or a union."""
    for _name, ft in t.fields:
        if isinstance(ft, StructT):
            if not _all_headers(ft):
                return False
        elif not isinstance(ft, (HeaderT, StackT, HeaderUnionT)):
            return False
    return True


def check_extern_functions(index: CodeIndex, report: Reporter, known: set[int] | None = None) -> None:
    """An extern function declared outside core.p4/v1model.p4 and called by the pipeline (p4c drops uncalled
    ones before the back end). `known`: ids of declarations already reported otherwise (v1model's hash and checksum
    functions declared by the program, which p4c's back end knows by name: hashalgo.py)."""
    reported: set[int] = set(known or ())
    for root in index.all_roots():
        for n in index.nodes(root):
            info = index.typed.calls.get(n) if isinstance(n, ast.Call) else None
            if info is None or info.kind != "extern_function" or id(info.decl) in reported:
                continue
            decl = info.decl
            loc = getattr(decl, "loc", None)
            if loc is None or is_system_file(loc.file):
                continue
            reported.add(id(decl))
            report.error_at_name(loc, info.name, f"{info.name}: unknown extern function")


@lru_cache(maxsize=256)
def is_system_file(path: str) -> bool:
    """Is `path` core.p4 or v1model.p4: this project's, or another copy found through `-I` (p4c's own p4include)?"""
    p = Path(path)
    if p.name in ("core.p4", "v1model.p4"):
        return True
    try:
        return p.resolve().parent == SYSTEM_INCLUDE_DIR
    except OSError:
        return False


def check_block_directions(typed: TypedProgram, report: Reporter) -> None:
    """Each V1Switch argument's parameters must have the directions of v1model's block type (p4c reports the
    first mismatch of a block as "Cannot unify ..."). A type error of p4c's front end: checked on the typed program,
    before elaboration, so that it comes before any back-end error (testdata/p4_16_bmv_errors/issue679-bmv2.p4)."""
    package = next((d for d in typed.program.declarations if isinstance(d, ast.PackageType) and d.name == "V1Switch"),
                   None)
    if package is None:
        return
    block_types = {d.name: d for d in typed.program.declarations if isinstance(d, (ast.ParserType, ast.ControlType))}
    blocks = top_blocks(typed)
    for role, pparam in zip(V1MODEL_ROLES, package.params, strict=False):
        block = blocks.get(role)
        expected_type = block_types.get(pparam.type.name) if isinstance(pparam.type, ast.NamedType) else None
        if block is None or expected_type is None:
            continue
        for actual, expected in zip(block.params, expected_type.params, strict=False):
            if (actual.direction or "") != (expected.direction or ""):
                report.error_at_name(actual.loc, actual.name,
                                     f"Cannot unify '{actual.direction or ''}' parameter '{actual.name}' with "
                                     f"'{expected.direction or ''}' parameter '{expected.name}' because they have "
                                     f"different directions")
                break


def top_blocks(typed: TypedProgram) -> dict[str, ast.ParserDeclaration | ast.ControlDeclaration]:
    """The parser or control declaration behind each V1Switch argument of `main`, by role, resolved as elaboration
    resolves them (`v1switch_block`); roles it cannot resolve are left out (elaboration reports them)."""
    main = next((d for d in typed.program.declarations if isinstance(d, ast.Instantiation) and d.name == "main"),
                None)
    if main is None:
        return {}
    out: dict[str, ast.ParserDeclaration | ast.ControlDeclaration] = {}
    for role, value in zip(V1MODEL_ROLES, by_position(V1SWITCH_PARAMS, main.args), strict=True):
        decl = v1switch_block(typed, value)[0] if value is not None else None
        if decl is not None:
            out[role] = decl
    return out
