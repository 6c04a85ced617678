"""Table properties BMv2 cannot represent (p4c's `backends/bmv2/common/control.cpp`, `metermap.cpp` and the
direct_meter converter in `backends/bmv2/simple_switch/simpleSwitch.cpp`): more than one lpm key, a direct counter
or meter shared by two tables, a direct meter no action reads, or one that is read but belongs to no table."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.elaborate import Pipeline, qualify
from p4switch.frontend.scope import Var
from p4switch.frontend.typecheck.helpers import expr_text
from p4switch.frontend.types import ExternT

from .index import CodeIndex
from .report import Reporter


def check_tables(pipeline: Pipeline, index: CodeIndex, order: list[tuple[str, ast.TableDeclaration]],
                 report: Reporter) -> None:
    """`order`: the applied tables as p4c converts them (apply order, ingress then egress)."""
    typed = pipeline.typed
    counters: dict[str, str] = {}  # direct counter -> the table that holds it
    meters: dict[str, str] = {}
    meter_reads = _direct_meter_reads(pipeline, index, report)
    for prefix, table in order:
        name = pipeline.table_names.get((prefix, table)) or qualify(prefix, table)
        props = {p.name: p for p in table.properties}
        key = props.get("key")
        if isinstance(key, ast.KeyProperty) and sum(ke.match_kind == "lpm" for ke in key.elements) > 1:
            report.error_at_name(table.loc, table.name, f"multiple LPM keys in table {name} not supported")
        for pname in ("counters", "meters"):
            prop = props.get(pname)
            inst = _instance(typed.refs.get(prop.value)) if prop is not None and prop.value is not None else None
            if inst is None:
                continue
            ext = qualify(prefix, inst)
            if pname == "counters" and _extern_name(pipeline, inst) == "direct_counter":
                if ext in counters:
                    report.error_at_name(inst.loc, inst.name, f"{ext}: Direct counters cannot be attached to "
                                                              f"multiple tables {counters[ext]} and {name}", last=True)
                else:
                    counters[ext] = name
            elif pname == "meters" and _extern_name(pipeline, inst) == "direct_meter":
                if ext not in meter_reads:
                    report.error_at_name(table.loc, table.name, f"{name}: table with direct meter {ext} must have "
                                                                f"at least one action with a read method call")
                elif ext in meters:
                    report.error_at_name(inst.loc, inst.name, f"{ext}: Direct meters cannot be attached to "
                                                              f"multiple tables {name} and {meters[ext]}", last=True)
                else:
                    meters[ext] = name
    for ext, inst in meter_reads.items():
        if ext not in meters:
            report.error_at_name(inst.loc, inst.name, f"{ext}: direct meter is not associated with any table via "
                                                      f"'meters' table property", last=True)


def _direct_meter_reads(pipeline: Pipeline, index: CodeIndex, report: Reporter) -> dict[str, ast.Instantiation]:
    """Direct meters some action of a pipeline control reads, by name; all reads of one meter must write the same
    destination (BMv2 stores it once per meter)."""
    typed = pipeline.typed
    found: dict[str, ast.Instantiation] = {}
    destinations: dict[str, str] = {}
    seen: set[int] = set()
    for role in ("ingress", "egress"):
        for owner, root in index.roots.get(role, []):
            for n in index.nodes(root):
                info = typed.calls.get(n) if isinstance(n, ast.Call) else None
                if info is None or info.kind != "extern_method" or info.name != "read" or id(n) in seen:
                    continue
                assert isinstance(n, ast.Call)
                seen.add(id(n))
                inst = _instance(typed.refs.get(info.receiver)) if info.receiver is not None else None
                if inst is None or _extern_name(pipeline, inst) != "direct_meter" or not n.args:
                    continue
                ext = qualify(owner.prefix, inst)
                found.setdefault(ext, inst)
                dest = expr_text(n.args[0].value)
                first = destinations.setdefault(ext, dest)
                if dest != first:
                    report.error(n.args[0].value.loc, f"all meter operations must write to the same destination, "
                                                      f"however {dest} and {first} are different")
    return found


def _instance(ref: object) -> ast.Instantiation | None:
    if isinstance(ref, Var) and isinstance(ref.node, ast.Instantiation):
        return ref.node
    return ref if isinstance(ref, ast.Instantiation) else None


def _extern_name(pipeline: Pipeline, inst: ast.Instantiation) -> str:
    var = pipeline.typed.decl_vars.get(inst)
    return var.type.name if var is not None and isinstance(var.type, ExternT) else ""
