"""Pure helpers of the checker: parameter arity, type-variable inference and substitution, the action names a
table's `switch (t.apply().action_run)` may use, and a short source-like rendering of expressions for messages."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.types import ExternT, InfIntT, ListT, P4Type, StackT, TupleT, TypeVarT


def is_optional(p: ast.Parameter) -> bool:
    return any(a.name == "optional" for a in p.annotations)


def arity_ok(params: tuple[ast.Parameter, ...], args: tuple[ast.Argument, ...]) -> bool:
    if any(a.name is not None for a in args):
        names = {p.name for p in params}
        return all(a.name in names for a in args)
    required = sum(1 for p in params if p.default is None and not is_optional(p))
    return required <= len(args) <= len(params)


def has_typevar(t: P4Type) -> bool:
    if isinstance(t, TypeVarT):
        return True
    if isinstance(t, (TupleT, ListT)):
        return any(has_typevar(e) for e in t.elements)
    if isinstance(t, ExternT):
        return any(has_typevar(a) for a in t.args)
    return False


def unify(pattern: P4Type, actual: P4Type, sub: dict[str, P4Type]) -> None:
    if isinstance(pattern, TypeVarT):
        if pattern.name not in sub and not isinstance(actual, InfIntT):
            sub[pattern.name] = actual
        return
    if isinstance(pattern, (TupleT, ListT)) and isinstance(actual, (TupleT, ListT)):
        for p, a in zip(pattern.elements, actual.elements, strict=False):
            unify(p, a, sub)


def substitute(t: P4Type, sub: dict[str, P4Type]) -> P4Type:
    if not sub:
        return t
    if isinstance(t, TypeVarT):
        return sub.get(t.name, t)
    if isinstance(t, TupleT):
        return TupleT(tuple(substitute(e, sub) for e in t.elements))
    if isinstance(t, ExternT):
        return ExternT(t.name, tuple(substitute(a, sub) for a in t.args), t.decl)
    if isinstance(t, StackT):
        return StackT(substitute(t.element, sub), t.size)
    return t


def table_action_names(decl: ast.TableDeclaration) -> list[str]:
    names: list[str] = []
    for prop in decl.properties:
        if isinstance(prop, ast.ActionsProperty):
            names = [a.name.name for a in prop.actions]
    if not any(isinstance(p, ast.DefaultActionProperty) and p.action is not None for p in decl.properties):
        names.append("NoAction")  # p4c adds `@defaultonly NoAction` to tables without a default action
    return names


def expr_text(e: ast.Node) -> str:
    """A short source-like rendering of an expression for messages."""
    if isinstance(e, ast.Name):
        return ("." if e.is_global else "") + e.name
    if isinstance(e, ast.Member):
        return f"{expr_text(e.expr)}.{e.member}"
    if isinstance(e, ast.Index):
        return f"{expr_text(e.expr)}[{expr_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{expr_text(e.expr)}[{expr_text(e.hi)}:{expr_text(e.lo)}]"
    if isinstance(e, ast.IntLiteral):
        return e.text or str(e.value)
    if isinstance(e, ast.BoolLiteral):
        return "true" if e.value else "false"
    if isinstance(e, ast.BinaryOp):
        return f"{expr_text(e.left)} {e.op} {expr_text(e.right)}"
    if isinstance(e, ast.UnaryOp):
        return f"{e.op}{expr_text(e.operand)}"
    if isinstance(e, ast.Call):
        return f"{expr_text(e.target)}(...)"
    if isinstance(e, ast.Cast):
        return f"(...){expr_text(e.expr)}"
    return type(e).__name__
