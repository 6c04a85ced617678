"""BMv2 back-end restrictions: reject, with p4c-bm2-ss's wording, the programs p4c-bm2-ss rejects for reasons of
its BMv2 back end (and a few front-end ones our front end lets through), so that a program `p4ina compile`
accepts also compiles for the `bmv2` target. Runs on the elaborated pipeline, before code generation; the
front-end errors p4c finds before type checking (a redeclared v1model name) or before any back-end check (V1Switch
block parameter directions) run on the parsed and the typed program, so that they are reported first, as p4c does.

| module | p4c source | what |
|---|---|---|
| `index.py` | | the code p4c keeps (bodies, tables, the actions and functions they use), walked once |
| `cfg.py` | `backends/bmv2/common/controlFlowGraph.cpp` | a table applied at two sites: a path back to itself, or different successors |
| `tables.py` | `backends/bmv2/common/control.cpp`, `metermap.cpp` | lpm keys, direct counters and meters |
| `declarations.py` | `common/header.cpp`, `common/action.cpp`, `simple_switch/simpleSwitch.cpp` | header widths, the headers type, user extern functions, block parameter directions (before elaboration), action data types |
| `hashalgo.py` | `simple_switch/simpleSwitch.cpp`, `midend/convertEnums` | a HashAlgorithm the program declares itself (not v1model.p4's) |
| `frontend.py` | p4c's front end (`testdata/p4_16_errors`) | errors our front end lets through: extract of a non-header, redeclared v1model names (before type checking), switch labels, keyless entries, duplicate control-plane names |
| `expressions.py` | `common/lower.cpp` | shift amounts wider than 8 bits |
| `externs.py` | `simple_switch/simpleSwitch.cpp`, `common/deparser.cpp`, `common/parser.cpp`, `common/check_unsupported.h` | clone/resubmit/recirculate placement, registers, log_msg, checksum blocks, deparser and parser statements, loops |

The list of restrictions, their messages and what is not covered: docs/compiler.md, "BMv2 back-end restrictions".
"""

from __future__ import annotations

from p4switch.exceptions import CompileError
from p4switch.frontend import ast
from p4switch.frontend.elaborate import Pipeline
from p4switch.frontend.typecheck import TypedProgram

from .cfg import check_control_graphs
from .declarations import check_block_directions, check_declarations
from .expressions import check_expressions
from .externs import check_externs
from .frontend import check_frontend_gaps, check_redeclarations
from .hashalgo import check_hash_algorithms
from .index import CodeIndex
from .report import LineOf, Reporter
from .tables import check_tables


def check_before_typecheck(program: ast.Program, *, line_of: LineOf | None = None) -> None:
    """p4c's name-resolution errors our front end lets through, raised before type checking (as p4c orders them)."""
    report = Reporter(line_of)
    check_redeclarations(program, report)
    if report.diagnostics:
        raise CompileError(report.diagnostics)


def check_before_elaboration(typed: TypedProgram, *, line_of: LineOf | None = None) -> None:
    """p4c's type errors on the V1Switch arguments, raised before elaboration reports anything of its own."""
    report = Reporter(line_of)
    check_block_directions(typed, report)
    if report.diagnostics:
        raise CompileError(report.diagnostics)


def check_bmv2_limits(pipeline: Pipeline, *, line_of: LineOf | None = None) -> None:
    """Raise `CompileError` with every BMv2 restriction the program breaks (nothing when it has none)."""
    report = Reporter(line_of)
    index = CodeIndex(pipeline)
    hashes = check_hash_algorithms(index, report)
    check_declarations(pipeline, index, report, known_externs=hashes)
    check_frontend_gaps(pipeline, index, report)
    graphs = check_control_graphs(pipeline, index, report)
    order = [(prefix, decl) for graph in graphs.values() for prefix, decl, _name in graph.tables.values()]
    check_tables(pipeline, index, order, report)
    check_externs(pipeline, index, report)
    check_expressions(index, report)
    if report.diagnostics:
        raise CompileError(report.diagnostics)


__all__ = ["check_before_elaboration", "check_before_typecheck", "check_bmv2_limits"]
