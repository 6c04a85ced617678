"""Expressions -> Python source with BMv2's integer semantics.

Values are kept as unsigned bit patterns of their type's width, so `+ - * << ~` only need a final mask and
equality works as is; signed (`int<W>`) semantics appear only where they differ: ordering comparisons (compare with
the sign bit flipped), `>>` (arithmetic), saturating arithmetic and widening casts (sign extension).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from p4switch.codegen.layout import class_name, pyname
from p4switch.codegen.names import py_int, py_str
from p4switch.frontend import ast
from p4switch.frontend.consteval import to_unsigned
from p4switch.frontend.scope import Var
from p4switch.frontend.types import (
    ApplyResultT,
    BitsT,
    BoolT,
    EnumT,
    ErrorT,
    InfIntT,
    NewTypeT,
    P4Type,
    StackT,
    StringT,
    StructLikeT,
    TupleT,
    TypeRefT,
    underlying,
)

if TYPE_CHECKING:
    from p4switch.codegen.blocks import BlockGen

#: Operand code that may be read twice or not at all: a name, an attribute chain or an integer literal.
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+|0x[0-9a-fA-F]+")


class CodegenError(Exception):
    """A construct the code generator cannot translate; carries the AST node for the diagnostic."""

    def __init__(self, node: ast.Node, message: str) -> None:
        super().__init__(message)
        self.node = node


def mask(width: int) -> str:
    return hex((1 << width) - 1)


class ExprGen:
    """Translates expressions of one block; `owner` resolves names and emits helper statements."""

    def __init__(self, owner: BlockGen) -> None:
        self.o = owner
        self.typed = owner.typed
        # expressions already evaluated into a temporary (an l-value's run-time index, evaluated before the
        # right-hand side or the call whose side effects could change it): their code is the temporary's name
        self.pinned: dict[ast.Expression, str] = {}

    def type_of(self, e: ast.Node) -> P4Type:
        t = self.typed.types.get(e)
        if t is None:
            raise CodegenError(e, "internal: untyped expression")
        return t

    # ---------------------------------------------------------------------------------------------- constants
    def const_code(self, value: Any, t: P4Type) -> str:
        if isinstance(value, tuple) and value and value[0] == "error":
            return str(self.o.mod.error_code(value[1]))
        if isinstance(value, tuple) and value and value[0] == "enum":
            enum_t = self.o.mod.typed.named_types.get(value[1])
            if isinstance(enum_t, EnumT):
                return str(enum_t.members.index(value[2]))
            return "0"
        if isinstance(value, bool):
            return "True" if value else "False"
        if isinstance(value, str):
            return py_str(value)
        if isinstance(value, int):
            u = underlying(t)
            if isinstance(u, BitsT):
                return py_int(to_unsigned(value, u.width)) if u.width else "0"
            if isinstance(u, BoolT):
                return "True" if value else "False"
            return py_int(value)
        raise CodegenError(self.o.current_node, f"unsupported constant {value!r}")

    # ----------------------------------------------------------------------------------------------- main entry
    def expr(self, e: ast.Expression) -> str:
        pinned = self.pinned.get(e)
        if pinned is not None:
            return pinned
        consts = self.typed.consts
        if e in consts and not isinstance(e, ast.Call):
            t = self.type_of(e)
            if not isinstance(t, (TypeRefT,)):
                return self.const_code(consts[e], t)
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise CodegenError(e, f"unsupported expression {type(e).__name__}")
        return str(method(e))

    def cond(self, e: ast.Expression) -> str:
        return self.expr(e)

    # ------------------------------------------------------------------------------------------------- leaves
    def e_Name(self, e: ast.Name) -> str:
        ref = self.typed.refs.get(e)
        if isinstance(ref, Var):
            return self.o.var_code(ref, e)
        raise CodegenError(e, f"{e.name}: not a value here")

    def e_Member(self, e: ast.Member) -> str:
        base_t = self.type_of(e.expr)
        if isinstance(base_t, TypeRefT):
            value = self.typed.consts.get(e)
            return self.const_code(value, self.type_of(e))
        if isinstance(base_t, StackT):
            base = self.expr(e.expr)
            if e.member == "last":
                return self.o.stack_last(base, e)
            if e.member == "next":
                return self.o.stack_next(base, e)
            if e.member == "lastIndex":
                return f"(({base}.ni - 1) & 0xffffffff)"
            if e.member == "size":
                return str(base_t.size)
        if isinstance(base_t, ApplyResultT):
            call = e.expr
            assert isinstance(call, ast.Call)
            result = self.o.table_apply_code(call)
            if e.member == "hit":
                return f"{result}[0]"
            if e.member == "miss":
                return f"(not {result}[0])"
            return f"{result}[1]"
        if isinstance(base_t, StructLikeT):
            return f"{self.expr(e.expr)}.{pyname(e.member)}"
        raise CodegenError(e, f"unsupported member access .{e.member} on {base_t}")

    def e_Index(self, e: ast.Index) -> str:
        base_t = self.type_of(e.expr)
        base = self.expr(e.expr)
        if isinstance(base_t, StackT):
            if e.index in self.typed.consts:
                return f"{base}.e[{self.typed.consts[e.index]}]"
            return f"_sidx({base}, {self.expr(e.index)})"
        if isinstance(base_t, TupleT):
            return f"{base}[{self.typed.consts[e.index]}]"
        raise CodegenError(e, "unsupported index expression")

    def e_Slice(self, e: ast.Slice) -> str:
        hi = int(self.typed.consts[e.hi])
        lo = int(self.typed.consts[e.lo])
        base = self.expr(e.expr)
        w = hi - lo + 1
        if lo == 0:
            return f"({base} & {mask(w)})"
        return f"(({base} >> {lo}) & {mask(w)})"

    def e_IntLiteral(self, e: ast.IntLiteral) -> str:
        return self.const_code(e.value, self.type_of(e))

    def e_BoolLiteral(self, e: ast.BoolLiteral) -> str:
        return "True" if e.value else "False"

    def e_StringLiteral(self, e: ast.StringLiteral) -> str:
        return repr(e.value)

    def e_ListExpression(self, e: ast.ListExpression) -> str:
        t = self.type_of(e)
        if isinstance(t, StructLikeT):
            return f"{class_name(t)}.mk(" + ", ".join(self.expr(i) for i in e.items) + ")"
        return "(" + "".join(self.expr(i) + ", " for i in e.items) + ")"

    def e_StructExpression(self, e: ast.StructExpression) -> str:
        t = self.type_of(e)
        if not isinstance(t, StructLikeT):
            raise CodegenError(e, "a structure initializer needs a struct or header type here")
        by_name = {f.name: f.value for f in e.fields}
        return f"{class_name(t)}.mk(" + ", ".join(self.expr(by_name[n]) for n, _ in t.fields) + ")"

    def e_Call(self, e: ast.Call) -> str:
        return self.o.call_expr(e)

    def e_Ternary(self, e: ast.Ternary) -> str:
        cond = self.cond(e.cond)
        then, then_pre = self._isolated(e.then)
        other, other_pre = self._isolated(e.else_)
        if not then_pre and not other_pre:
            return f"({then} if {cond} else {other})"
        # a branch calls something with side effects: evaluate only the chosen one (P4_16 8.5.1)
        tmp = self.o.tmp("c")
        self.o.w(f"if {cond}:")
        self._nest(then_pre, f"{tmp} = {then}")
        self.o.w("else:")
        self._nest(other_pre, f"{tmp} = {other}")
        return tmp

    def _isolated(self, e: ast.Expression) -> tuple[str, list[str]]:
        """Translate `e`, taking back the statements it needed (calls with copy-back) instead of emitting them."""
        mark = len(self.o.lines)
        code = self.expr(e)
        pre = self.o.lines[mark:]
        del self.o.lines[mark:]
        return code, pre

    def _nest(self, pre: list[str], last: str) -> None:
        for line in pre:
            self.o.lines.append("    " + line)
        self.o.level += 1
        self.o.w(last)
        self.o.level -= 1

    def e_InvalidHeader(self, e: ast.InvalidHeader) -> str:
        return f"{class_name(self.type_of(e))}()"

    # ---------------------------------------------------------------------------------------------- operators
    def e_UnaryOp(self, e: ast.UnaryOp) -> str:
        t = underlying(self.type_of(e))
        a = self.expr(e.operand)
        if e.op == "!":
            return f"(not {a})"
        assert isinstance(t, BitsT)
        if e.op == "~":
            return f"({a} ^ {mask(t.width)})"
        if e.op == "-":
            return f"((-{a}) & {mask(t.width)})"
        return a

    def e_BinaryOp(self, e: ast.BinaryOp) -> str:
        op = e.op
        if op in ("&&", "||"):
            left = self.cond(e.left)
            right, pre = self._isolated(e.right)
            if not pre:
                return f"({left} {'and' if op == '&&' else 'or'} {right})"
            # the right operand calls something with side effects: evaluate it only when needed (P4_16 8.5)
            tmp = self.o.tmp("b")
            self.o.w(f"{tmp} = {left}")
            self.o.w(f"if {tmp}:" if op == "&&" else f"if not {tmp}:")
            self._nest(pre, f"{tmp} = {right}")
            return tmp
        lt = self.type_of(e.left)
        rt = self.type_of(e.right)
        a = self.expr(e.left)
        b = self.expr(e.right)
        if op in ("==", "!="):
            if isinstance(underlying(lt), StructLikeT) or isinstance(lt, StackT):
                # headers: equal when both invalid, or both valid with equal fields (P4_16 8.16); structs field-wise
                return f"_eq({a}, {b})" if op == "==" else f"(not _eq({a}, {b}))"
            return f"({a} {op} {b})"
        ul = underlying(lt)
        if op in ("<", ">", "<=", ">="):
            if isinstance(ul, BitsT) and ul.signed:
                s = hex(1 << (ul.width - 1))
                return f"(({a} ^ {s}) {op} ({b} ^ {s}))"
            return f"({a} {op} {b})"
        if op == "++":
            ur = underlying(rt)
            assert isinstance(ur, BitsT)
            return f"(({a} << {ur.width}) | {b})"
        t = underlying(self.type_of(e))
        if not isinstance(t, BitsT):
            raise CodegenError(e, f"operator {op} on {t} is not supported")
        w, m = t.width, mask(t.width)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("+", "-", "*"):
            return f"(({a} {op} {b}) & {m})"
        if op in ("/", "%"):
            return f"_div({a}, {b})" if op == "/" else f"_mod({a}, {b})"
        if op == "<<":
            if e.right in self.typed.consts:
                k = int(self.typed.consts[e.right])
                return "0" if k >= w else f"(({a} << {k}) & {m})"
            if _SIMPLE.fullmatch(a) and _SIMPLE.fullmatch(b):
                # inline (b read twice, a maybe not at all): only plain names, attribute chains or literals
                return f"((({a} << {b}) & {m}) if {b} < {w} else 0)"
            return f"_shl({a}, {b}, {w})"
        if op == ">>":
            if t.signed:
                s = hex(1 << (w - 1))
                if e.right in self.typed.consts:
                    k = min(int(self.typed.consts[e.right]), w)
                    return f"(((({a} ^ {s}) - {s}) >> {k}) & {m})"
                return f"(((({a} ^ {s}) - {s}) >> {b}) & {m})"
            return f"({a} >> {b})"
        if op == "|+|":
            if t.signed:
                return f"_ssat({a}, {b}, {w})"
            return f"min({a} + {b}, {m})"
        if op == "|-|":
            if t.signed:
                return f"_ssat({a}, (-{b}) & {m}, {w}, {b})"
            return f"max({a} - {b}, 0)"
        raise CodegenError(e, f"unsupported operator {op}")

    def e_Cast(self, e: ast.Cast) -> str:
        target = self.type_of(e)
        src = self.type_of(e.expr)
        a = self.expr(e.expr)
        ut, us = underlying(target), underlying(src)
        if isinstance(ut, BitsT):
            if isinstance(us, BoolT):
                return f"int({a})"
            if isinstance(us, BitsT):
                if ut.width < us.width:
                    return f"({a} & {mask(ut.width)})"
                if ut.width > us.width and us.signed:
                    s = hex(1 << (us.width - 1))
                    return f"((({a} ^ {s}) - {s}) & {mask(ut.width)})"
                return a
            if isinstance(us, InfIntT):
                return f"({a} & {mask(ut.width)})"
        if isinstance(ut, BoolT):
            if isinstance(us, BoolT):
                return a
            return f"({a} != 0)"
        if isinstance(target, (StructLikeT, TupleT)):
            return self.expr(e.expr)
        if isinstance(target, (EnumT, ErrorT, NewTypeT, StringT)):
            return a
        raise CodegenError(e, f"unsupported cast from {src} to {target}")

    def e_DontCare(self, e: ast.DontCare) -> str:
        return "None"
