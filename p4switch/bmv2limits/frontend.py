"""p4c front-end errors (testdata/p4_16_errors and p4_16_bmv_errors) that this project's front end lets through,
reported here with p4c's wording so that they cannot reach the bmv2 target: extracting a non-header, redeclaring a
core.p4/v1model.p4 name with another kind of declaration, duplicate or misplaced `switch` labels, entries on a
table without a key, and two objects with one control-plane name."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.elaborate import Pipeline
from p4switch.frontend.typecheck.helpers import expr_text
from p4switch.frontend.types import HeaderT

from .declarations import is_system_file
from .index import CodeIndex
from .report import Reporter, start_of


def check_frontend_gaps(pipeline: Pipeline, index: CodeIndex, report: Reporter) -> None:
    for root in index.all_roots():
        for n in index.nodes(root):
            if isinstance(n, ast.Call):
                _check_extract(pipeline, n, report)
            elif isinstance(n, ast.SwitchStatement):
                _check_switch_labels(pipeline, n, report)
            elif isinstance(n, ast.TableDeclaration):
                _check_keyless_entries(n, report)
    check_control_plane_names(pipeline, report)


def _check_extract(pipeline: Pipeline, call: ast.Call, report: Reporter) -> None:
    """testdata/p4_16_bmv_errors/no-header1-bmv2.p4: `extract` of anything but a header."""
    info = pipeline.typed.calls.get(call)
    if info is None or info.kind != "extern_method" or info.name != "extract" or not call.args:
        return
    arg = call.args[0].value
    if not isinstance(pipeline.typed.types.get(arg), HeaderT):
        report.error(start_of(arg), f"{expr_text(arg)}: argument must be a header")


def _check_switch_labels(pipeline: Pipeline, s: ast.SwitchStatement, report: Reporter) -> None:
    """testdata/p4_16_errors/duplicate-switch-case.p4 and default-last-switch.p4."""
    seen: dict[object, ast.Expression] = {}
    after_default: ast.Expression | None = None
    for case in s.cases:
        label = case.label
        if isinstance(label, ast.DefaultExpression):
            after_default = label
            continue
        if after_default is not None:
            report.error(s.loc, f"switch label {expr_text(label)} follows 'default' label, which is not allowed.")
            return
        value = pipeline.typed.consts.get(label)
        if value is None or isinstance(pipeline.typed.refs.get(label), ast.ActionDeclaration):
            continue  # action labels: the type checker reports duplicates
        key = value if not isinstance(value, list) else tuple(value)
        if key in seen:
            report.error(start_of(label), f"{expr_text(label)}: 'switch' label duplicates {expr_text(seen[key])}")
        else:
            seen[key] = label


def _check_keyless_entries(table: ast.TableDeclaration, report: Reporter) -> None:
    """testdata/p4_16_errors/entries-keyless.p4: const entries need a key to match."""
    props = {p.name: p for p in table.properties}
    key = props.get("key")
    if "entries" in props and (not isinstance(key, ast.KeyProperty) or not key.elements):
        report.error_at_name(table.loc, table.name, f"Entries cannot be specified for a table with no key {table.name}")


def check_redeclarations(program: ast.Program, report: Reporter) -> None:
    """testdata/p4_16_bmv_errors/issue383-err-bmv2.p4: a program's top-level declaration named like a core.p4 or
    v1model.p4 declaration of another kind (an extern function may only be overloaded by extern functions). p4c
    finds it while resolving names, before type checking: run on the parsed program, so that it comes before a
    type error the clash causes (`V1Switch(p(), verify_checksum(), ...)` calling the extern function:
    emit-struct-bmv2.p4, issue1653-*-bmv2.p4, issue363-err-bmv2.p4)."""
    system: dict[str, ast.Node] = {}
    declarations = program.declarations
    for d in declarations:
        name = getattr(d, "name", None)
        if isinstance(name, str) and is_system_file(d.loc.file):
            system.setdefault(name, d)
    for d in declarations:
        name = getattr(d, "name", None)
        if not isinstance(name, str) or is_system_file(d.loc.file) or name not in system:
            continue
        other = system[name]
        if type(other) is type(d) and isinstance(d, ast.FunctionPrototype):
            continue  # an overload
        report.error_at_name(d.loc, name, f"Re-declaration of {name} with different type:")


def check_control_plane_names(pipeline: Pipeline, report: Reporter) -> None:
    """testdata/p4_16_errors/actions-with-duplicate-control-plane-names1.p4: two different actions or tables of
    the pipeline with one fully-qualified control-plane name; reported at the later declaration, naming the
    earlier one (p4c names each by its `@name` as written, or its declared name)."""
    named: list[tuple[str, str, ast.Node]] = [("action", name, decl) for decl, name in pipeline.action_names.items()]
    named += [("table", name, decl) for (_prefix, decl), name in pipeline.table_names.items()]
    first: dict[tuple[str, str], ast.Node] = {}
    for kind, name, decl in sorted(named, key=lambda item: (item[2].loc.file, item[2].loc.line, item[2].loc.column)):
        earlier = first.setdefault((kind, name), decl)
        if earlier is decl:
            continue
        decl_name = str(getattr(decl, "name", ""))
        report.error_at_name(decl.loc, decl_name,
                             f"{_written_name(decl)}: conflicting control plane name: {_written_name(earlier)}")


def _written_name(decl: ast.Node) -> str:
    for a in getattr(decl, "annotations", ()):
        if a.name == "name" and a.args and isinstance(a.args[0], ast.StringLiteral):
            return a.args[0].value
    return str(getattr(decl, "name", ""))
