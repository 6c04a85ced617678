"""v1model extern uses BMv2 cannot run, as p4c-bm2-ss's converters reject them
(`backends/bmv2/simple_switch/simpleSwitch.cpp`, `backends/bmv2/common/check_unsupported.h`): clone, resubmit and
recirculate outside the block BMv2 runs them in, registers without a size or with a non-integer element type,
checksum blocks that do anything but call verify/update_checksum on plain fields, and loops, except a `for`
statement in an action body: p4c lowers that to BMv2's `_jump`/`_jump_if_zero` primitives (p4c pull request 5552,
March 2026, exercised by its forloop-bmv2 sample), while a `for`-in loop is still rejected there (it needs midend
lowering the BMv2 back end lacks); BMv2's control-flow graph and parse graph cannot hold a loop at all."""

from __future__ import annotations

from collections.abc import Iterator

from p4switch.frontend import ast
from p4switch.frontend.elaborate import BlockInstance, Pipeline, qualify
from p4switch.frontend.typecheck.helpers import expr_text
from p4switch.frontend.types import BitsT, BoolT, EnumT, ErrorT, ExternT, NewTypeT, underlying

from .index import CodeIndex
from .report import Reporter, start_of

# The block each primitive is allowed in, and p4c's message otherwise (its wording, including "'resubmit' can only
# be invoked in egress" for recirculate).
_PLACEMENT = {
    "resubmit_preserving_field_list": ("ingress", "'resubmit' can only be invoked in ingress"),
    "recirculate_preserving_field_list": ("egress", "'resubmit' can only be invoked in egress"),
}
_CHECKSUM_CALLS = {"verify_checksum": ("verify_checksum", "verify_checksum_with_payload"),
                   "compute_checksum": ("update_checksum", "update_checksum_with_payload")}


def check_externs(pipeline: Pipeline, index: CodeIndex, report: Reporter) -> None:
    """`index.roots` pairs each piece of code with its block; the role decides where clone & co. may run (p4c
    copies a top-level action into each control that uses it)."""
    action_bodies = _action_bodies(pipeline.typed.program)
    for role, block in pipeline.blocks.items():
        for _owner, root in index.roots.get(role, []):
            for n in index.nodes(root):
                if isinstance(n, ast.ForInStatement) or (isinstance(n, ast.ForStatement)
                                                         and id(root) not in action_bodies):
                    report.error(n.loc, "BMV2 does not support loops")
                elif isinstance(n, ast.Call):
                    _check_call(pipeline, role, n, report)
        for inst_block in _instances(block):
            for local in inst_block.decl.locals:
                if isinstance(local, ast.Instantiation):
                    _check_register(pipeline, inst_block, local, report)
        if role in _CHECKSUM_CALLS and isinstance(block.decl, ast.ControlDeclaration):
            _check_checksum_block(pipeline, role, block.decl.body, report)
        if role == "deparser" and isinstance(block.decl, ast.ControlDeclaration):
            _check_deparser(pipeline, block.decl.body, report)
        if role == "parser" and isinstance(block.decl, ast.ParserDeclaration):
            for state in block.decl.states:
                for st in state.statements:
                    _check_parser_statement(pipeline, st, report)


def _action_bodies(program: ast.Program) -> set[int]:
    """The bodies of every action, top-level or local to a control: where a loop may stand."""
    out: set[int] = set()
    for decl in program.declarations:
        locals_ = decl.locals if isinstance(decl, ast.ControlDeclaration) else ()
        for d in (decl, *locals_):
            if isinstance(d, ast.ActionDeclaration):
                out.add(id(d.body))
    return out


def _check_call(pipeline: Pipeline, role: str, call: ast.Call, report: Reporter) -> None:
    info = pipeline.typed.calls.get(call)
    if info is None or info.kind != "extern_function":
        return
    if info.name in ("clone", "clone_preserving_field_list", "clone3") and call.args:
        kind = pipeline.typed.consts.get(call.args[0].value)
        if not (isinstance(kind, tuple) and len(kind) == 3):
            report.error(call.args[0].value.loc, f"{expr_text(call.args[0].value)}: must be a constant on this target")
            return
        wanted = "ingress" if kind[2] == "I2E" else "egress"
        if role != wanted:
            report.error(call.loc, f"'{info.name}({kind[2]}, ...) not invoked in {wanted} {expr_text(call)}")
    elif info.name in _PLACEMENT and role != _PLACEMENT[info.name][0]:
        report.error(call.loc, f"{_PLACEMENT[info.name][1]} {expr_text(call)}")
    elif info.name == "log_msg" and len(call.args) == 2:
        _check_log_msg(pipeline, call, report)


def _check_log_msg(pipeline: Pipeline, call: ast.Call, report: Reporter) -> None:
    """BMv2's log_msg takes a list of integral values (ExternConverter_log_msg)."""
    arg = call.args[1].value
    if isinstance(arg, ast.ListExpression):
        items = list(arg.items)
    elif isinstance(arg, ast.StructExpression):
        items = [f.value for f in arg.fields]
    else:
        report.error(start_of(call), f"{expr_text(call)}: Second argument must be a list expression: {expr_text(arg)}")
        return
    for item in items:
        t = pipeline.typed.types.get(item)
        if t is not None and not isinstance(underlying(t), (BitsT, BoolT, ErrorT)):
            report.error(start_of(call), f"{expr_text(call)}: only integral values supported for logged values")
            return


def _check_register(pipeline: Pipeline, block: BlockInstance, inst: ast.Instantiation, report: Reporter) -> None:
    var = pipeline.typed.decl_vars.get(inst)
    t = var.type if var is not None else None
    if not isinstance(t, ExternT) or t.name != "register":
        return
    name = qualify(block.prefix, inst)
    size = pipeline.typed.consts.get(inst.args[0].value) if inst.args else None
    if size == 0:
        report.error_at_name(inst.loc, inst.name, f"{name}: direct registers are not supported in bmv2", last=True)
    elem = t.args[0] if t.args else None
    while isinstance(elem, NewTypeT):
        elem = elem.base
    if isinstance(elem, EnumT) and elem.underlying is not None:
        elem = elem.underlying
    if elem is not None and not isinstance(elem, BitsT):
        report.error_at_name(inst.loc, inst.name, f"{name}: Only registers with bit or int types are currently "
                                                  f"supported", last=True)


def _check_checksum_block(pipeline: Pipeline, role: str, body: ast.BlockStatement, report: Reporter) -> None:
    """BMv2 checksum blocks are lists of checksum units, not code: each statement must be one call (p4c's
    `SimpleSwitchBackend::convertChecksum`), its data plain fields, lists and constants (`EnsureExpressionIsSimple`)."""
    allowed = _CHECKSUM_CALLS[role]
    for s in _flatten(body):
        info = pipeline.typed.calls.get(s.call) if isinstance(s, ast.MethodCallStatement) else None
        if info is None or info.kind != "extern_function" or info.name not in allowed:
            report.error(s.loc, f"{statement_text(pipeline, s)}: Only calls to {allowed[0]} or {allowed[1]} allowed")
            continue
        assert isinstance(s, ast.MethodCallStatement)
        if len(s.call.args) > 1:
            for bad in _computations(pipeline, s.call.args[1].value):
                report.error(start_of(bad), f"{expr_text(bad)}: Computations are not supported in {allowed[0]}")


def _check_deparser(pipeline: Pipeline, body: ast.BlockStatement, report: Reporter) -> None:
    """A BMv2 deparser is a list of headers to emit plus extern-function primitives (p4c's
    `DeparserConverter::convertDeparserBody`): no conditions, assignments or other method calls; `return` and
    `exit` end it."""
    for s in _flatten(body):
        if isinstance(s, (ast.ReturnStatement, ast.ExitStatement)):
            return
        if isinstance(s, ast.VariableDeclaration) and s.init is None:
            continue
        info = pipeline.typed.calls.get(s.call) if isinstance(s, ast.MethodCallStatement) else None
        if info is not None and (info.kind in ("extern_function", "block_apply")
                                 or (info.kind == "extern_method" and info.name == "emit")):
            continue  # (a nested control's body is not checked)
        report.error(s.loc, f"{statement_text(pipeline, s)}: not supported within a deparser on this target")


# What a BMv2 parser state can do besides assignments (p4c's `ParserConverter::convertParserStatement`).
_PARSER_CALLS = {("extern_method", "extract"), ("extern_method", "lookahead"), ("extern_method", "advance"),
                 ("extern_function", "verify"), ("extern_function", "assert"), ("extern_function", "assume"),
                 ("header_method", "setValid"), ("header_method", "setInvalid"),
                 ("stack_method", "push_front"), ("stack_method", "pop_front")}


def _check_parser_statement(pipeline: Pipeline, st: ast.Statement, report: Reporter) -> None:
    for s in _flatten(st):
        if isinstance(s, ast.IfStatement):  # p4c's front end turns a parser's `if` into states
            for branch in (s.then, s.else_):
                if branch is not None:
                    _check_parser_statement(pipeline, branch, report)
            continue
        if isinstance(s, (ast.AssignmentStatement, ast.VariableDeclaration)):
            continue
        info = pipeline.typed.calls.get(s.call) if isinstance(s, ast.MethodCallStatement) else None
        if info is not None and (info.kind, info.name) in _PARSER_CALLS:
            continue
        if info is not None and info.kind == "block_apply":
            continue  # a sub-parser: p4c inlines it into the parser's states before converting them
        report.error(s.loc, f"{statement_text(pipeline, s)}: not supported in parser on this target")


def statement_text(pipeline: Pipeline, s: ast.Statement) -> str:
    """How p4c prints a statement in these messages: a call as the call, anything else by its IR class name."""
    if isinstance(s, ast.MethodCallStatement):
        return expr_text(s.call)
    return _IR_NAMES.get(type(s).__name__, type(s).__name__)


_IR_NAMES = {"VariableDeclaration": "Declaration_Variable", "ConstantDeclaration": "Declaration_Constant"}


def _flatten(s: ast.Statement) -> Iterator[ast.Statement]:
    if isinstance(s, ast.BlockStatement):
        for x in s.statements:
            yield from _flatten(x)
    elif not isinstance(s, (ast.EmptyStatement, ast.ConstantDeclaration)):
        yield s


def _computations(pipeline: Pipeline, e: ast.Expression) -> Iterator[ast.Expression]:
    """The outermost sub-expressions of a checksum's data that are neither a field, a list, a struct expression,
    an array element nor a constant after folding."""
    if e in pipeline.typed.consts or isinstance(e, (ast.Name, ast.Member, ast.IntLiteral)):
        return
    if isinstance(e, ast.Index):
        yield from _computations(pipeline, e.expr)
    elif isinstance(e, ast.ListExpression):
        for item in e.items:
            yield from _computations(pipeline, item)
    elif isinstance(e, ast.StructExpression):
        for f in e.fields:
            yield from _computations(pipeline, f.value)
    else:
        yield e


def _instances(block: BlockInstance) -> list[BlockInstance]:
    out = [block]
    for inst in out:
        out.extend(inst.children)
    return out
