"""Expressions: literals, names, members, indexes and slices, list and structure initializers, unary, binary and
conditional operators, casts; each gets its type (`TypedProgram.types`) and, when constant, its folded value
(`TypedProgram.consts`). Also which expressions may be assigned to (`check_lvalue`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4switch.frontend import ast
from p4switch.frontend import consteval as ce
from p4switch.frontend.scope import Scope, Var
from p4switch.frontend.typecheck.base import ARITH_OPS, COMPARE_OPS
from p4switch.frontend.typecheck.conversion import ConversionChecker
from p4switch.frontend.typecheck.helpers import expr_text
from p4switch.frontend.types import (
    ActionEnumT,
    ApplyResultT,
    BitsT,
    BlockT,
    BoolT,
    CallableT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    HeaderUnionT,
    InfIntT,
    ListT,
    P4Type,
    StackT,
    StringT,
    StructExprT,
    StructLikeT,
    StructT,
    TableT,
    TupleT,
    TypeRefT,
    underlying,
)


class ExpressionChecker(ConversionChecker):
    """Typing and constant folding of expressions."""

    if TYPE_CHECKING:
        # Calls are expressions whose arguments are expressions; `call` comes from `CallChecker`, built on this
        # layer, and is declared here for the type checker only.
        def call(self, scope: Scope, e: ast.Call, expected: P4Type | None) -> P4Type: ...

    def expr(self, scope: Scope, e: ast.Expression, expected: P4Type | None = None) -> P4Type:
        t = self._expr(scope, e, expected)
        self.out.types[e] = t
        return t

    def _expr(self, scope: Scope, e: ast.Expression, expected: P4Type | None) -> P4Type:
        consts = self.out.consts
        if isinstance(e, ast.IntLiteral):
            if e.width is not None:
                if e.width == 0 and e.value != 0:
                    raise self.fail(e.loc, "a 0-width literal must be 0")
                consts[e] = ce.wrap(e.value, e.width, e.signed)
                return BitsT(e.width, e.signed)
            consts[e] = e.value
            return InfIntT()
        if isinstance(e, ast.BoolLiteral):
            consts[e] = e.value
            return BoolT()
        if isinstance(e, ast.StringLiteral):
            consts[e] = e.value
            return StringT()
        if isinstance(e, ast.Name):
            return self.name(scope, e)
        if isinstance(e, ast.Member):
            return self.member(scope, e)
        if isinstance(e, ast.Index):
            base = self.expr(scope, e.expr)
            it = self.expr(scope, e.index)
            if isinstance(base, StackT):
                if not isinstance(underlying(it), (BitsT, InfIntT)):
                    raise self.fail(e.index.loc, f"a stack index must be an integer, not {it}")
                if e.index in consts and not 0 <= consts[e.index] < base.size:
                    raise self.fail(e.index.loc, f"index {consts[e.index]} out of bounds of {base}")
                return base.element
            if isinstance(base, TupleT):
                if e.index not in consts:
                    raise self.fail(e.index.loc, "a tuple index must be a compile-time constant")
                i = consts[e.index]
                if not 0 <= i < len(base.elements):
                    raise self.fail(e.index.loc, f"index {i} out of bounds of {base}")
                return base.elements[i]
            raise self.fail(e.loc, f"{expr_text(e.expr)} of type {base} cannot be indexed")
        if isinstance(e, ast.Slice):
            base = self.expr(scope, e.expr)
            hi = self.const_int(scope, e.hi, None)
            lo = self.const_int(scope, e.lo, None)
            ub = underlying(base)
            if isinstance(ub, InfIntT):
                if e.expr in consts:
                    consts[e] = (consts[e.expr] >> lo) & ce.mask(hi - lo + 1)
                return BitsT(hi - lo + 1)
            if not isinstance(ub, BitsT):
                raise self.fail(e.loc, f"bit slice of a value of type {base}")
            if hi < lo:
                raise self.fail(e.loc, f"bit slice [{hi}:{lo}]: the high index is below the low index")
            if hi >= ub.width:
                raise self.fail(e.loc, f"bit slice [{hi}:{lo}] out of range of {base}")
            if e.expr in consts:
                consts[e] = (consts[e.expr] >> lo) & ce.mask(hi - lo + 1)
            return BitsT(hi - lo + 1)
        if isinstance(e, ast.Call):
            return self.call(scope, e, expected)
        if isinstance(e, ast.ListExpression):
            exp_elems: tuple[P4Type, ...] | None = None
            if isinstance(expected, (TupleT, ListT)) and len(expected.elements) == len(e.items):
                exp_elems = expected.elements
            elif isinstance(expected, (StructT, HeaderT)) and len(expected.fields) == len(e.items):
                exp_elems = tuple(ft for _, ft in expected.fields)
            types = tuple(self.expr(scope, item, exp_elems[i] if exp_elems else None) for i, item in enumerate(e.items))
            return ListT(types)
        if isinstance(e, ast.StructExpression):
            target = self.resolve_type(scope, e.type) if e.type is not None else expected
            fields = []
            for f in e.fields:
                ft = target.field_type(f.name) if isinstance(target, StructLikeT) else None
                fields.append((f.name, self.expr(scope, f.value, ft)))
            if e.type is not None:
                assert target is not None
                self.out.types[e] = StructExprT(tuple(fields))
                self.convert(e, target, "structure initializer")
                return target
            return StructExprT(tuple(fields))
        if isinstance(e, ast.UnaryOp):
            return self.unary(scope, e, expected)
        if isinstance(e, ast.BinaryOp):
            return self.binary(scope, e, expected)
        if isinstance(e, ast.Ternary):
            ct = self.expr(scope, e.cond, BoolT())
            if not isinstance(ct, BoolT):
                raise self.fail(e.cond.loc, f"the condition of ?: must be bool, not {ct}")
            tt = self.expr(scope, e.then, expected)
            et = self.expr(scope, e.else_, expected if isinstance(tt, InfIntT) else tt)
            if isinstance(tt, InfIntT) and isinstance(et, InfIntT) and isinstance(expected, BitsT) \
                    and e.cond not in consts:
                self.convert(e.then, expected, "?:")
                self.convert(e.else_, expected, "?:")
                tt = et = expected
            if isinstance(tt, InfIntT) and not isinstance(et, InfIntT):
                self.convert(e.then, et, "?:")
                tt = et
            elif isinstance(et, InfIntT) and not isinstance(tt, InfIntT):
                self.convert(e.else_, tt, "?:")
            elif tt != et:
                raise self.fail(e.loc, f"?: branches have different types {tt} and {et}")
            if e.cond in consts and e.then in consts and e.else_ in consts:
                consts[e] = consts[e.then] if consts[e.cond] else consts[e.else_]
            if isinstance(tt, InfIntT) and e not in consts:
                raise self.fail(e.loc, "?: with integer literals needs a width (cast one branch)")
            return tt
        if isinstance(e, ast.Cast):
            return self.cast(scope, e)
        if isinstance(e, (ast.DontCare,)):
            return DontCareT()
        if isinstance(e, ast.DefaultExpression):
            return DontCareT()
        if isinstance(e, ast.InvalidHeader):
            if expected is None or not isinstance(expected, (HeaderT, HeaderUnionT)):
                raise self.fail(e.loc, "{#} needs a header or header union context")
            return expected
        if isinstance(e, ast.TupleKeyset):
            raise self.fail(e.loc, "a keyset is only allowed in select cases and table entries")
        raise self.fail(e.loc, f"unsupported expression {type(e).__name__}")

    def name(self, scope: Scope, e: ast.Name) -> P4Type:
        found = (self.globals if e.is_global else scope).lookup_value(e.name)
        if found is None:
            t = (self.globals if e.is_global else scope).lookup_type(e.name)
            if t is not None:
                self.out.refs[e] = t
                return TypeRefT(t)
            raise self.fail(e.loc, f"{e.name}: declaration not found")
        self.out.refs[e] = found
        if isinstance(found, Var):
            if found.kind == "const" and found.value is not None:
                self.out.consts[e] = found.value
            return found.type
        if isinstance(found, ast.ActionDeclaration):
            return CallableT("action", found.name, found)
        if isinstance(found, ast.FunctionDeclaration):
            return CallableT("function", found.name, found)
        if isinstance(found, list):
            return CallableT("extern_function", e.name, found)
        if isinstance(found, ast.TableDeclaration):
            return TableT(found)
        if isinstance(found, ast.ParserState):
            raise self.fail(e.loc, f"{e.name}: a state is not a value")
        raise self.fail(e.loc, f"{e.name}: not a value")

    def member(self, scope: Scope, e: ast.Member) -> P4Type:
        base = self.expr(scope, e.expr)
        m = e.member
        consts = self.out.consts
        if isinstance(base, TypeRefT):
            target = base.target
            if isinstance(target, ErrorT):
                if m not in self.out.error_codes:
                    raise self.fail(e.loc, f"error.{m}: declaration not found")
                consts[e] = ("error", m)
                return ErrorT()
            if isinstance(target, EnumT):
                if m not in target.members:
                    raise self.fail(e.loc, f"{target.name}.{m}: declaration not found")
                consts[e] = target.values[m] if target.underlying is not None and m in target.values else (
                    "enum", target.name, m)
                return target
            if isinstance(target, ExternT) or isinstance(target, BlockT):
                raise self.fail(e.loc, f"{target}.{m}: static members are not supported")
            raise self.fail(e.loc, f"{target} has no member {m}")
        if isinstance(base, (StructT, HeaderT, HeaderUnionT)):
            ft = base.field_type(m)
            if ft is not None:
                return ft
            if isinstance(base, (HeaderT, HeaderUnionT)) and m in ("isValid", "setValid", "setInvalid"):
                if isinstance(base, HeaderUnionT) and m != "isValid":
                    raise self.fail(e.loc, f"{m}: not a method of header union {base}")
                return CallableT("header_method", m)
            if isinstance(base, HeaderT) and m in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits",
                                                   "maxSizeInBytes"):
                return CallableT("header_method", m)
            raise self.fail(e.loc, f"{expr_text(e.expr)}.{m}: {base} has no field {m}")
        if isinstance(base, StackT):
            if m in ("next", "last"):
                if m == "next" and not self._in_parser:
                    raise self.fail(e.loc, f"{expr_text(e)}: .next is only allowed in parsers")
                return base.element
            if m == "lastIndex":
                return BitsT(32)
            if m == "size":
                consts[e] = base.size
                return BitsT(32)
            if m in ("push_front", "pop_front"):
                return CallableT("stack_method", m)
            raise self.fail(e.loc, f"{expr_text(e.expr)}.{m}: header stacks have no member {m}")
        if isinstance(base, ExternT):
            if base.decl is None or not any(md.name == m for md in base.decl.methods):
                raise self.fail(e.loc, f"{expr_text(e.expr)}.{m}: {base.name} has no method {m}")
            return CallableT("extern_method", m, base)
        if isinstance(base, TableT):
            if m != "apply":
                raise self.fail(e.loc, f"{expr_text(e)}: a table has only the apply method")
            return CallableT("table_apply", base.decl.name, base.decl)
        if isinstance(base, BlockT):
            if m != "apply":
                raise self.fail(e.loc, f"{expr_text(e)}: only apply can be called on a {base.kind}")
            return CallableT("block_apply", base.name, base.decl)
        if isinstance(base, ApplyResultT):
            if m in ("hit", "miss"):
                return BoolT()
            if m == "action_run":
                return ActionEnumT(base.decl)
            raise self.fail(e.loc, f"{expr_text(e)}: a table apply result has hit, miss and action_run only")
        raise self.fail(e.loc, f"{expr_text(e.expr)} of type {base} has no member {m}")

    def unary(self, scope: Scope, e: ast.UnaryOp, expected: P4Type | None) -> P4Type:
        consts = self.out.consts
        if e.op == "!":
            t = self.expr(scope, e.operand, BoolT())
            if not isinstance(t, BoolT):
                raise self.fail(e.loc, f"!: operand must be bool, not {t}")
            if e.operand in consts:
                consts[e] = not consts[e.operand]
            return t
        t = self.expr(scope, e.operand, expected)
        ut = underlying(t) if not isinstance(t, EnumT) else t
        if e.op == "~":
            if not isinstance(ut, BitsT):
                raise self.fail(e.loc, f"~: operand must be bit<> or int<>, not {t}")
            if e.operand in consts:
                consts[e] = ce.wrap(~consts[e.operand], ut.width, ut.signed)
            return ut
        if e.op in ("-", "+"):
            if not isinstance(ut, (BitsT, InfIntT)):
                raise self.fail(e.loc, f"{e.op}: operand must be numeric, not {t}")
            if e.operand in consts:
                v = -consts[e.operand] if e.op == "-" else consts[e.operand]
                consts[e] = ce.wrap(v, ut.width, ut.signed) if isinstance(ut, BitsT) else v
            return ut
        raise self.fail(e.loc, f"unsupported unary operator {e.op}")

    def binary(self, scope: Scope, e: ast.BinaryOp, expected: P4Type | None) -> P4Type:
        op = e.op
        consts = self.out.consts
        if op in ("&&&", ".."):
            raise self.fail(e.loc, f"{op} is only allowed in keysets")
        if op in ("&&", "||"):
            lt = self.expr(scope, e.left, BoolT())
            rt = self.expr(scope, e.right, BoolT())
            for side, st in ((e.left, lt), (e.right, rt)):
                if not isinstance(st, BoolT):
                    raise self.fail(side.loc, f"{op}: operands must be bool, not {st}")
            if e.left in consts and e.right in consts:
                consts[e] = (consts[e.left] and consts[e.right]) if op == "&&" else (consts[e.left] or consts[e.right])
            return BoolT()
        if op in ("<<", ">>"):
            lt = self.expr(scope, e.left, expected)
            rt = self.expr(scope, e.right)
            ul = underlying(lt)
            ur = underlying(rt)
            if isinstance(ur, BitsT) and ur.signed:
                raise self.fail(e.right.loc, f"{op}: the shift amount must be unsigned, not {rt}")
            if not isinstance(ur, (BitsT, InfIntT)):
                raise self.fail(e.right.loc, f"{op}: the shift amount must be an unsigned integer, not {rt}")
            if e.right in consts and consts[e.right] < 0:
                raise self.fail(e.right.loc, f"{op}: negative shift amount")
            if isinstance(ul, InfIntT):
                if e.right not in consts:
                    raise self.fail(e.loc, f"{expr_text(e)}: the left operand of a shift by a run-time amount needs a width")
                if e.left in consts:
                    consts[e] = ce.binary(op, consts[e.left], consts[e.right], None, True)
                return ul
            if not isinstance(ul, BitsT):
                raise self.fail(e.left.loc, f"{op}: cannot shift a value of type {lt}")
            if isinstance(ur, InfIntT):
                self.out.types[e.right] = BitsT(32)  # a constant amount; any width holds it
            if e.left in consts and e.right in consts:
                consts[e] = ce.binary(op, consts[e.left], consts[e.right], ul.width, ul.signed)
            return ul
        if op == "++":
            lt = self.expr(scope, e.left)
            rt = self.expr(scope, e.right)
            ul, ur = underlying(lt), underlying(rt)
            if not isinstance(ul, BitsT) or not isinstance(ur, BitsT):
                raise self.fail(e.loc, f"++: operands must have a width (bit<> or int<>), not {lt} and {rt}")
            if e.left in consts and e.right in consts:
                v = (ce.to_unsigned(consts[e.left], ul.width) << ur.width) | ce.to_unsigned(consts[e.right], ur.width)
                consts[e] = ce.wrap(v, ul.width + ur.width, ul.signed)
            return BitsT(ul.width + ur.width, ul.signed)
        # arithmetic, bitwise and comparisons: both sides of one type, unsized literals adopt the other's type
        hint = expected if op in ARITH_OPS else None
        lt = self.expr(scope, e.left, hint)
        rt = self.expr(scope, e.right, lt if not isinstance(lt, InfIntT) else hint)
        if isinstance(lt, InfIntT) and not isinstance(rt, InfIntT):
            self.expr(scope, e.left, rt)
            self.convert(e.left, rt, op)
            lt = rt
        elif isinstance(rt, InfIntT) and not isinstance(lt, InfIntT):
            self.convert(e.right, lt, op)
            rt = lt
        if op in COMPARE_OPS:
            if op in ("==", "!="):
                if lt != rt and not (isinstance(lt, (ListT, TupleT)) or isinstance(rt, (ListT, TupleT))):
                    if underlying(lt) == underlying(rt) and isinstance(underlying(lt), BitsT):
                        pass
                    else:
                        raise self.fail(e.loc, f"{op}: cannot compare values of different types {lt} and {rt}")
                if isinstance(lt, (ExternT, TableT, CallableT, StringT)):
                    raise self.fail(e.loc, f"{op}: values of type {lt} cannot be compared")
            else:
                ul = underlying(lt) if not isinstance(lt, EnumT) or lt.underlying else lt
                if not isinstance(ul, (BitsT, InfIntT)) or (lt != rt and underlying(lt) != underlying(rt)):
                    raise self.fail(e.loc, f"{op}: cannot compare values of types {lt} and {rt}")
            if e.left in consts and e.right in consts:
                a, b = consts[e.left], consts[e.right]
                consts[e] = {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
            return BoolT()
        ul, ur = underlying(lt), underlying(rt)
        if isinstance(ul, InfIntT) and isinstance(ur, InfIntT):
            if e.left in consts and e.right in consts:
                if op in ("/", "%") and consts[e.right] == 0:
                    raise self.fail(e.loc, "division by zero")
                if op in ("|+|", "|-|"):
                    raise self.fail(e.loc, f"{op}: saturating arithmetic needs a width")
                consts[e] = ce.binary(op, consts[e.left], consts[e.right], None, True)
            return ul
        if not isinstance(ul, BitsT) or not isinstance(ur, BitsT):
            raise self.fail(e.loc, f"{op}: operands must be bit<> or int<>, not {lt} and {rt}")
        if ul != ur:
            raise self.fail(e.loc, f"{expr_text(e)}: cannot operate on values with different types {lt} and {rt}"
                            " (insert a cast)")
        if op in ("*", "&") and e not in consts:
            # p4c's strength reduction: `x * 0` and `x & 0` are 0 (when x has no side effects), so a division
            # of such a product is a constant too
            for zero, other in ((e.left, e.right), (e.right, e.left)):
                if consts.get(zero) == 0 and not any(isinstance(n, ast.Call) for n in ast.walk(other)):
                    consts[e] = 0
        if op in ("/", "%"):
            if ul.signed:
                raise self.fail(e.loc, f"{op}: division and modulo are only defined on unsigned values")
            if e.right in consts and consts[e.right] == 0:
                raise self.fail(e.loc, "division by zero")
            power_of_two = e.right in consts and consts[e.right] > 0 and consts[e.right] & (consts[e.right] - 1) == 0
            if not (e.left in consts and e.right in consts) and not power_of_two:
                # BMv2 has no run-time division; p4c only reduces divisions by powers of two (to shifts and masks)
                raise self.fail(e.loc, f"{op}: division and modulo need compile-time constants "
                                       "(or a power-of-two divisor)")
        if e.left in consts and e.right in consts:
            consts[e] = ce.binary(op, consts[e.left], consts[e.right], ul.width, ul.signed)
        return ul

    def cast(self, scope: Scope, e: ast.Cast) -> P4Type:
        target = self.resolve_type(scope, e.type)
        src = self.expr(scope, e.expr, target)
        consts = self.out.consts
        ut, us = underlying(target), underlying(src)
        ok = False
        if isinstance(ut, BitsT):
            ok = isinstance(us, (BitsT, InfIntT)) or (isinstance(us, BoolT) and ut.width == 1)
        elif isinstance(ut, BoolT):
            ok = isinstance(us, BoolT) or (isinstance(us, BitsT) and us.width == 1 and not us.signed) or isinstance(
                us, InfIntT)
        elif isinstance(target, (StructT, HeaderT, TupleT)) and isinstance(src, (ListT, StructExprT)):
            self.convert(e.expr, target, "cast")
            return target
        else:
            ok = src == target
        if not ok:
            raise self.fail(e.loc, f"cannot cast {src} to {target}")
        if isinstance(target, EnumT) and isinstance(us, BitsT) and us != ut:
            raise self.fail(e.loc, f"cannot cast {src} to {target}: the underlying type is {ut}")
        if e.expr in consts:
            v = consts[e.expr]
            if isinstance(ut, BitsT):
                consts[e] = ce.wrap(int(v), ut.width, ut.signed)
            elif isinstance(ut, BoolT):
                consts[e] = bool(v)
        return target

    def check_lvalue(self, scope: Scope, e: ast.Expression) -> None:
        root = e
        while True:
            if isinstance(root, ast.Member):
                if isinstance(self.out.types.get(root.expr), StackT) and root.member in ("last", "lastIndex", "size"):
                    if root.member != "last":
                        raise self.fail(e.loc, f"{expr_text(e)}: cannot be the target of an assignment")
                root = root.expr
            elif isinstance(root, (ast.Index, ast.Slice)):
                root = root.expr
            else:
                break
        if not isinstance(root, ast.Name):
            raise self.fail(e.loc, f"{expr_text(e)}: cannot be the target of an assignment")
        ref = self.out.refs.get(root)
        if not isinstance(ref, Var) or ref.kind in ("const", "instance", "ctor_param"):
            raise self.fail(e.loc, f"{expr_text(e)}: cannot be the target of an assignment")
        if ref.kind == "param" and ref.direction in ("in", None):
            what = "an 'in' parameter" if ref.direction == "in" else "a directionless parameter"
            raise self.fail(e.loc, f"{expr_text(e)}: cannot assign to {what}")
