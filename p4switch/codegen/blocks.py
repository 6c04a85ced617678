"""Statements, calls, externs, actions and tables of one parser or control instance -> Python functions.

Each control instance becomes `c_<n>(ctx, <object params>)`; its actions and tables become sibling closures
(`a_<n>_<action>`, `t_<n>_<table>`) that receive the same object parameters plus `cl`, a slotted record holding the
control's scalar parameters and control-level variables. Parsers become one function running a state machine over
`ctx.data` with an integer read offset. Everything is resolved at compile time: names become Python locals or
closure variables bound once in `build(rt)`, so the per-packet code does no lookups beyond attribute access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from p4switch.codegen.exprs import CodegenError, ExprGen
from p4switch.codegen.layout import default_value, is_object, leaf_fields, pyname, scalar_width
from p4switch.codegen.loops import emit_for, emit_for_in, emit_jump
from p4switch.codegen.vector import emit_vector_run
from p4switch.frontend import ast
from p4switch.frontend.elaborate import BlockInstance
from p4switch.frontend.scope import Var
from p4switch.frontend.typecheck import CallInfo
from p4switch.frontend.types import (
    ActionEnumT,
    BitsT,
    BoolT,
    ExternT,
    HeaderT,
    HeaderUnionT,
    ListT,
    P4Type,
    StructExprT,
    StructLikeT,
    StructT,
    underlying,
)

if TYPE_CHECKING:
    from p4switch.codegen.module import ModuleGen


class BlockGen:
    def __init__(self, mod: ModuleGen, block: BlockInstance, index: int) -> None:
        self.mod = mod
        self.block = block
        self.index = index
        self.typed = mod.typed
        self.decl = block.decl
        self.is_parser = isinstance(self.decl, ast.ParserDeclaration)
        self.x = ExprGen(self)
        self.lines: list[str] = []
        self.level = 0
        self.var_loc: dict[Var, str] = {}
        self.tmp_counter = 0
        self.current_node: ast.Node = self.decl
        self.cl_fields: list[tuple[str, P4Type]] = []
        self.obj_params: list[str] = []
        self.copy_out: list[list[tuple[str, P4Type]]] = []  # per open function: out/inout scalars to return
        self.return_value: list[bool] = []
        self.packet_param: str | None = None
        self.control_return = "return"  # what `return` in the apply block becomes (scalar params go back)
        self._setup_params()

    # ------------------------------------------------------------------------------------------------ emitting
    def w(self, line: str) -> None:
        self.lines.append("    " * self.level + line)

    def tmp(self, hint: str = "t") -> str:
        self.tmp_counter += 1
        return f"_{hint}{self.tmp_counter}"

    def error_at(self, node: ast.Node, message: str) -> CodegenError:
        return CodegenError(node, message)

    # -------------------------------------------------------------------------------------------- name binding
    def _setup_params(self) -> None:
        for p in self.decl.params:
            var = self.typed.decl_vars[p]
            t = var.type
            if isinstance(t, ExternT) and t.name in ("packet_in", "packet_out"):
                self.packet_param = p.name
                self.var_loc[var] = "_pkt"
                if t.name == "packet_out":
                    self.obj_params.append("_o")
                continue
            if is_object(t):
                name = f"p_{p.name}"
                self.obj_params.append(name)
                self.var_loc[var] = name
            else:
                self.cl_fields.append((f"p_{p.name}", t))
                self.var_loc[var] = f"cl.p_{p.name}"
        for p in getattr(self.decl, "constructor_params", ()):
            cvar = self.typed.decl_vars.get(p)
            if cvar is not None:
                self.var_loc[cvar] = self.x.const_code(self.block.ctor_values.get(p.name, 0), cvar.type)
        for local in self.decl.locals:
            if isinstance(local, (ast.VariableDeclaration, ast.ConstantDeclaration)):
                lvar = self.typed.decl_vars.get(local)
                if lvar is not None and not self.is_parser:
                    self.var_loc[lvar] = f"cl.v_{local.name}"
                    self.cl_fields.append((f"v_{local.name}", lvar.type))

    @property
    def params_sig(self) -> str:
        return "".join(f", {p}" for p in self.obj_params)

    @property
    def cl_class(self) -> str:
        return f"L_{self.index}"

    def var_code(self, var: Var, node: ast.Node) -> str:
        loc = self.var_loc.get(var)
        if loc is not None:
            return loc
        if var.kind == "instance":
            return self.mod.instance_binding(self.block, var, node)
        if var.kind == "const":
            return self.x.const_code(var.value, var.type)
        raise CodegenError(node, f"{var.name}: not available here")

    def bind_local(self, var: Var) -> str:
        self.tmp_counter += 1
        name = f"l{self.tmp_counter}_{var.name}"
        self.var_loc[var] = name
        return name

    # --------------------------------------------------------------------------------------------- statements
    def block_stmts(self, stmts: tuple[ast.Statement, ...]) -> None:
        start = len(self.lines)
        i = 0
        while i < len(stmts):
            done = emit_vector_run(self, stmts, i)  # unrolled per-element runs -> numpy (codegen/vector.py)
            if not done:
                self.stmt(stmts[i])
            i += done or 1
        if len(self.lines) == start:
            self.w("pass")

    def stmt(self, st: ast.Statement) -> None:
        self.current_node = st
        if isinstance(st, ast.BlockStatement):
            self.block_stmts(st.statements)
        elif isinstance(st, ast.AssignmentStatement):
            self.assign(st.left, st.right)
        elif isinstance(st, ast.MethodCallStatement):
            self.call_stmt(st.call)
        elif isinstance(st, ast.IfStatement):
            self.if_stmt(st)
        elif isinstance(st, ast.SwitchStatement):
            self.switch_stmt(st)
        elif isinstance(st, ast.ReturnStatement):
            self.return_stmt(st)
        elif isinstance(st, ast.ExitStatement):
            self.w("raise _Exit")
        elif isinstance(st, ast.EmptyStatement):
            pass
        elif isinstance(st, ast.VariableDeclaration):
            var = self.typed.decl_vars[st]
            name = self.bind_local(var)
            if st.init is not None and not is_object(var.type):
                self.w(f"{name} = {self.x.expr(st.init)}")
                return
            self.w(f"{name} = {default_value(var.type)}")
            if st.init is not None:
                self.assign_to(name, var.type, st.init)
        elif isinstance(st, ast.ConstantDeclaration):
            pass  # folded at every use
        elif isinstance(st, ast.Instantiation):
            raise CodegenError(st, "instantiations inside apply blocks are not supported")
        elif isinstance(st, ast.ForStatement):
            emit_for(self, st)
        elif isinstance(st, ast.ForInStatement):
            emit_for_in(self, st)
        elif isinstance(st, (ast.BreakStatement, ast.ContinueStatement)):
            emit_jump(self, st)
        else:
            raise CodegenError(st, f"unsupported statement {type(st).__name__}")

    def if_stmt(self, st: ast.IfStatement, keyword: str = "if") -> None:
        c = self.typed.consts.get(st.cond)
        if isinstance(c, bool):
            chosen = st.then if c else st.else_
            if chosen is not None:
                self.stmt(chosen)
            return
        self.w(f"{keyword} {self.x.cond(st.cond)}:")
        self.level += 1
        self.block_stmts((st.then,))
        self.level -= 1
        other = st.else_
        if other is None:
            return
        if isinstance(other, ast.IfStatement) and not isinstance(self.typed.consts.get(other.cond), bool):
            # `else if` chains become `elif` (deep nesting would hit Python's indentation limit) unless the
            # condition needs statements of its own (a call with copy-back)
            mark = len(self.lines)
            self.x.cond(other.cond)
            simple = len(self.lines) == mark
            del self.lines[mark:]
            if simple:
                self.if_stmt(other, "elif")
                return
        self.w("else:")
        self.level += 1
        self.block_stmts((other,))
        self.level -= 1

    def switch_stmt(self, st: ast.SwitchStatement) -> None:
        t = self.typed.types[st.expr]
        sel = self.tmp("sw")
        if isinstance(t, ActionEnumT):
            call = st.expr.expr if isinstance(st.expr, ast.Member) else None
            assert isinstance(call, ast.Call)
            self.w(f"{sel} = {self.table_apply_code(call)}[1]")
        else:
            self.w(f"{sel} = {self.x.expr(st.expr)}")
        pending: list[str] = []
        first = True
        default_body: ast.BlockStatement | None = None
        for case in st.cases:
            if isinstance(case.label, ast.DefaultExpression):
                if case.body is None:
                    continue
                default_body = case.body
                continue
            if isinstance(t, ActionEnumT):
                action = self.typed.refs.get(case.label)
                pending.append(str(self.mod.action_id(action)))
            else:
                pending.append(self.x.expr(case.label))
            if case.body is None:
                continue
            cond = " or ".join(f"{sel} == {v}" for v in pending)
            self.w(f"{'if' if first else 'elif'} {cond}:")
            first = False
            self.level += 1
            self.block_stmts((case.body,))
            self.level -= 1
            pending = []
        if default_body is not None:
            if first:
                self.block_stmts((default_body,))
            else:
                self.w("else:")
                self.level += 1
                self.block_stmts((default_body,))
                self.level -= 1

    def return_stmt(self, st: ast.ReturnStatement) -> None:
        if not self.copy_out:
            self.w(self.control_return)
            return
        outs = self.copy_out[-1]
        has_value = self.return_value[-1] if self.return_value else False
        values = []
        if has_value and st.value is not None:
            values.append(self.x.expr(st.value))
        values += [code for code, _ in outs]
        if not values:
            self.w("return")
        elif len(values) == 1:
            self.w(f"return {values[0]}")
        else:
            self.w(f"return ({', '.join(values)})")

    # --------------------------------------------------------------------------------------------- assignment
    def pin_indexes(self, lvalue: ast.Expression, effects: ast.Node) -> list[ast.Expression]:
        """Evaluate the run-time stack indexes of `lvalue` into temporaries now, when `effects` contains a call
        whose side effects could change them (P4_16 evaluates an l-value before the right-hand side, and an
        argument's l-value at the call). Returns what to `unpin` afterwards."""
        if not any(isinstance(n, ast.Call) for n in ast.walk(effects)):
            return []
        pinned: list[ast.Expression] = []
        for n in ast.walk(lvalue):
            if isinstance(n, ast.Index) and n.index not in self.typed.consts and n.index not in self.x.pinned:
                tmp = self.tmp("i")
                self.w(f"{tmp} = {self.x.expr(n.index)}")
                self.x.pinned[n.index] = tmp
                pinned.append(n.index)
        return pinned

    def unpin(self, pinned: list[ast.Expression]) -> None:
        for e in pinned:
            del self.x.pinned[e]

    def assign(self, left: ast.Expression, right: ast.Expression) -> None:
        pinned = self.pin_indexes(left, right)
        try:
            self._assign(left, right)
        finally:
            self.unpin(pinned)

    def _assign(self, left: ast.Expression, right: ast.Expression) -> None:
        lt = self.typed.types[left]
        if isinstance(left, ast.Slice):
            self.assign_slice_value(left, self.x.expr(right))
            return
        if is_object(lt):
            target = self.x.expr(left)
            self.assign_to(target, lt, right)
            return
        self.store(left, self.x.expr(right))

    def store(self, left: ast.Expression, value: str) -> None:
        """Write a scalar into an l-value (a variable, a field, a stack element field)."""
        if isinstance(left, ast.Slice):  # a slice of a slice: merge into the enclosing slice, outwards
            self.assign_slice_value(left, value)
            return
        if isinstance(left, ast.Name):
            var = self.typed.refs.get(left)
            if not isinstance(var, Var):
                raise CodegenError(left, "not an l-value")
            self.w(f"{self.var_code(var, left)} = {value}")
            return
        self.w(f"{self.x.expr(left)} = {value}")

    def assign_to(self, target: str, t: P4Type, right: ast.Expression) -> None:
        """`target` (python code of an object or scalar location) = `right`, with P4 copy semantics."""
        rt = self.typed.types.get(right)
        if not is_object(t):
            self.w(f"{target} = {self.x.expr(right)}")
            return
        if isinstance(right, ast.InvalidHeader):
            if isinstance(t, HeaderUnionT):
                for f, _ in t.fields:
                    self.w(f"{target}.{pyname(f)}._v = False")
            else:
                self.w(f"{target}._v = False")
            return
        if isinstance(right, (ast.ListExpression, ast.StructExpression)) or isinstance(rt, (ListT, StructExprT)):
            assert isinstance(t, StructLikeT)
            if isinstance(right, ast.ListExpression):
                items = list(right.items)
            elif isinstance(right, ast.StructExpression):
                by_name = {f.name: f.value for f in right.fields}
                items = [by_name[n] for n, _ in t.fields]
            else:
                self.w(f"{target}.assign({self.x.expr(right)})")
                return
            temps = []
            for (fname, ftype), item in zip(t.fields, items, strict=False):
                if is_object(ftype):
                    tmp = self.tmp()
                    self.w(f"{tmp} = {default_value(ftype)}")
                    self.assign_to(tmp, ftype, item)
                    temps.append((fname, ftype, tmp))
                else:
                    tmp = self.tmp()
                    self.w(f"{tmp} = {self.x.expr(item)}")
                    temps.append((fname, ftype, tmp))
            for fname, ftype, tmp in temps:
                if is_object(ftype):
                    self.w(f"{target}.{pyname(fname)}.assign({tmp})")
                else:
                    self.w(f"{target}.{pyname(fname)} = {tmp}")
            if isinstance(t, HeaderT):
                self.w(f"{target}._v = True")
            return
        self.w(f"{target}.assign({self.x.expr(right)})")

    # ------------------------------------------------------------------------------------------------- calls
    def call_stmt(self, call: ast.Call) -> None:
        info = self.typed.calls.get(call)
        if info is None:
            raise CodegenError(call, "unresolved call")
        if info.kind == "table_apply":
            self.w(self.table_apply_code(call))
            return
        code = self.call_code(call, info, statement=True)
        if code:
            self.w(code)

    def call_expr(self, call: ast.Call) -> str:
        info = self.typed.calls.get(call)
        if info is None:
            raise CodegenError(call, "unresolved call")
        if info.kind == "table_apply":
            return self.table_apply_code(call)
        if info.kind == "header_method":
            recv = self.x.expr(info.receiver) if info.receiver is not None else ""
            if info.name == "isValid":
                return f"{recv}._v"
            return str(self.typed.consts.get(call, 0))
        code = self.call_code(call, info, statement=False)
        if not code:
            raise CodegenError(call, "this call has no value")
        return code

    def call_code(self, call: ast.Call, info: CallInfo, *, statement: bool) -> str:
        kind = info.kind
        if kind == "header_method":
            recv = self.x.expr(info.receiver) if info.receiver is not None else ""
            if info.name == "isValid":
                return f"{recv}._v"
            if info.name == "setValid":
                self.set_valid(info.receiver, recv, True)
                return ""
            if info.name == "setInvalid":
                self.set_valid(info.receiver, recv, False)
                return ""
            return ""
        if kind == "stack_method":
            recv = self.x.expr(info.receiver) if info.receiver is not None else ""
            count = self.typed.consts.get(call.args[0].value, 1) if call.args else 1
            return f"{recv}.{info.name}({count})"
        if kind in ("action", "function"):
            return self.user_call(call, info, statement=statement)
        if kind == "block_apply":
            return self.block_apply(call, info)
        if kind == "extern_function":
            return self.mod.externs.function(self, call, info, statement=statement)
        if kind == "extern_method":
            return self.mod.externs.method(self, call, info, statement=statement)
        raise CodegenError(call, f"unsupported call kind {kind}")

    def set_valid(self, receiver: ast.Expression | None, recv: str, valid: bool) -> None:
        # a header union member: validating one invalidates its siblings
        if receiver is not None and isinstance(receiver, ast.Member):
            parent_t = self.typed.types.get(receiver.expr)
            if isinstance(parent_t, HeaderUnionT) and valid:
                parent = self.x.expr(receiver.expr)
                for f, _ in parent_t.fields:
                    if f != receiver.member:
                        self.w(f"{parent}.{pyname(f)}._v = False")
        self.w(f"{recv}.set_valid()" if valid else f"{recv}._v = False")

    def user_call(self, call: ast.Call, info: CallInfo, *, statement: bool) -> str:
        decl = info.decl
        fn = self.mod.callable_name(self, decl)
        args: list[str] = []
        copy_back: list[tuple[ast.Expression | None, P4Type]] = []
        pinned: list[ast.Expression] = []  # out/inout l-values are located at the call, before its side effects
        for (param, ptype), arg in zip(info.params, info.args, strict=False):
            if arg is None:
                args.append(self.x.expr(param.default) if param.default is not None else default_value(ptype))
                continue
            if isinstance(arg.value, ast.DontCare):
                args.append(default_value(ptype))
                if param.direction in ("out", "inout") and not is_object(ptype):
                    copy_back.append((None, ptype))  # the callee still returns it: keep the tuple positions
                continue
            if param.direction in ("out", "inout") and not is_object(ptype):
                pinned += self.pin_indexes(arg.value, call)
            code = self.x.expr(arg.value)
            if param.direction in ("out", "inout") and not is_object(ptype):
                copy_back.append((arg.value, ptype))
            if param.direction in ("in", None) and is_object(ptype):
                code = f"{code}.copy()"
            args.append(code)
        prefix = "ctx"
        if isinstance(decl, ast.ActionDeclaration) and self.mod.is_local_action(self.block, decl):
            prefix = f"ctx{self.params_sig}, cl"
        invocation = f"{fn}({prefix}{''.join(', ' + a for a in args)})"
        returns_value = isinstance(decl, ast.FunctionDeclaration) and not self.mod.returns_void(decl)
        if not copy_back:
            return invocation
        offset = 1 if returns_value else 0
        result = self.call_copy_back(invocation, [target for target, _ in copy_back], offset)
        self.unpin(pinned)
        if returns_value:
            return result if len(copy_back) + offset == 1 else f"{result}[0]"
        return ""

    def call_copy_back(self, invocation: str, targets: list[ast.Expression | None], offset: int) -> str:
        """Call an action or function whose out/inout scalars come back as return values (after `offset` return
        values) and store them in `targets` (None: `_` or no target). An `exit` in the callee copies them back too
        (the callee hands them over on the exception), then keeps unwinding. Returns the result's variable."""
        result = self.tmp("r")
        total = len(targets) + offset

        def store_all(source: str, whole: bool) -> None:
            for i, target in enumerate(targets):
                if target is None:
                    continue
                value = source if whole else f"{source}[{i + offset}]"
                if isinstance(target, ast.Slice):
                    self.assign_slice_value(target, value)
                else:
                    self.store(target, value)

        if offset == 0 and any(t is not None for t in targets):
            self.w("try:")
            self.w(f"    {result} = {invocation}")
            self.w("except _Exit as _x:")
            self.level += 1
            store_all("_x.outs", False)
            self.w("raise")
            self.level -= 1
        else:
            self.w(f"{result} = {invocation}")
        store_all(result, total == 1)
        return result

    def assign_slice_value(self, left: ast.Slice, value: str) -> None:
        base = self.x.expr(left.expr)
        hi = int(self.typed.consts[left.hi])
        lo = int(self.typed.consts[left.lo])
        m = (1 << (hi - lo + 1)) - 1
        bt = underlying(self.typed.types[left.expr])
        full = (1 << (bt.width if isinstance(bt, BitsT) else hi + 1)) - 1
        self.store(left.expr, f"(({base} & {hex(full ^ (m << lo))}) | (({value} & {hex(m)}) << {lo}))")

    def block_apply(self, call: ast.Call, info: CallInfo) -> str:
        recv = info.receiver
        child: BlockInstance | None = None
        if isinstance(recv, ast.Name):
            child = self.block.child_by_name.get(recv.name)
        if child is None:
            raise CodegenError(call, "only control instances declared in this control can be applied")
        fn = self.mod.block_fn(child)
        if isinstance(child.decl, ast.ParserDeclaration):
            return self.subparser_apply(call, info, fn)
        args = []
        scalar_params = []
        for (param, ptype), arg in zip(info.params, info.args, strict=False):
            if arg is None:
                raise CodegenError(call, f"missing argument for {param.name}")
            if is_object(ptype):
                args.append(self.x.expr(arg.value))
            else:
                scalar_params.append((param, ptype, arg))
        if scalar_params:
            scalars = [self.x.expr(arg.value) for _, _, arg in scalar_params]
            result = self.tmp("r")
            self.w("try:")
            self.w(f"    {result} = {fn}(ctx{''.join(', ' + a for a in args)}, ({', '.join(scalars)},))")
            self.w("except _Exit as _x:")
            self.level += 1
            for i, (param, _, arg) in enumerate(scalar_params):
                if param.direction in ("out", "inout"):
                    self.store(arg.value, f"_x.outs[{i}]")
            self.w("raise")
            self.level -= 1
            for i, (param, _, arg) in enumerate(scalar_params):
                if param.direction in ("out", "inout"):
                    self.store(arg.value, f"{result}[{i}]")
            return ""
        return f"{fn}(ctx{''.join(', ' + a for a in args)})"

    def subparser_apply(self, call: ast.Call, info: CallInfo, fn: str) -> str:
        """`sub.apply(pkt, ...)` in a parser: the sub-parser continues at this parser's cursor and hands the new
        cursor back (p4c inlines sub-parsers: their errors stop the whole parser, their `reject` rejects it);
        headers and structs are passed by reference, scalars copied in and (out/inout) back."""
        if not self.is_parser:
            raise CodegenError(call, "a parser can only be applied inside a parser")
        args: list[str] = []
        scalars: list[tuple[ast.Parameter, ast.Expression]] = []
        for (param, ptype), arg in zip(info.params, info.args, strict=False):
            if arg is None:
                raise CodegenError(call, f"missing argument for {param.name}")
            if isinstance(ptype, ExternT) and ptype.name == "packet_in":
                continue
            if is_object(ptype):
                args.append(self.x.expr(arg.value))
            else:
                scalars.append((param, arg.value))
        result = self.tmp("r")
        values = "".join(self.x.expr(v) + ", " for _, v in scalars)
        self.w(f"{result} = {fn}(ctx, d, n, p{''.join(', ' + a for a in args)}, ({values}))")
        self.w(f"p = {result}[0]")
        for i, (param, value) in enumerate(scalars):
            if param.direction in ("out", "inout"):
                if isinstance(value, ast.Slice):
                    self.assign_slice_value(value, f"{result}[1][{i}]")
                else:
                    self.store(value, f"{result}[1][{i}]")
        return ""

    # -------------------------------------------------------------------------------------------------- tables
    def table_apply_code(self, call: ast.Call) -> str:
        info = self.typed.calls[call]
        table = info.decl
        fn = self.mod.table_fn(self, table)
        return f"{fn}(ctx{self.params_sig}, cl)"

    # ------------------------------------------------------------------------------------------------- stacks
    def stack_last(self, base: str, node: ast.Node) -> str:
        # in a parser an empty stack's .last is a StackOutOfBounds parser error; controls never fail on it
        return f"_last({base})" if self.is_parser else f"_lastc({base})"

    def stack_next(self, base: str, node: ast.Node) -> str:
        return f"_next({base})"

    # ---------------------------------------------------------------------------------------------- field lists
    def field_groups(self, e: ast.Expression) -> list[tuple[str | None, list[tuple[str, int]]]]:
        """The fields of a hash/checksum/log field list as `(guard, [(value code, width), ...])` runs, `guard` the
        validity test of the header they belong to (None: always present); BMv2 leaves out invalid headers."""
        groups: list[tuple[str | None, list[tuple[str, int]]]] = []

        def add(guard: str | None, item: tuple[str, int]) -> None:
            if groups and groups[-1][0] == guard:
                groups[-1][1].append(item)
            else:
                groups.append((guard, [item]))

        def visit(expr: ast.Expression) -> None:
            t = self.typed.types.get(expr)
            if isinstance(expr, ast.ListExpression):
                for item in expr.items:
                    visit(item)
                return
            if isinstance(t, HeaderT):
                code = self.x.expr(expr)
                for path, ft in leaf_fields(t, code):
                    add(f"{code}._v", (_int(path, ft), scalar_width(ft)))
                return
            if isinstance(t, StructT):
                code = self.x.expr(expr)
                for path, ft in leaf_fields(t, code):
                    add(None, (_int(path, ft), scalar_width(ft)))
                return
            guard = None
            if isinstance(expr, ast.Member):
                parent_t = self.typed.types.get(expr.expr)
                if isinstance(parent_t, HeaderT):
                    guard = f"{self.x.expr(expr.expr)}._v"
            add(guard, (_int(self.x.expr(expr), t), scalar_width(t) if t is not None else 0))

        visit(e)
        return groups

    def field_list(self, e: ast.Expression) -> str:
        """A tuple expression of `(value, width)` pairs for hashes, checksums and logs; fields of invalid headers
        are left out, as BMv2 does."""
        parts = []
        for guard, items in self.field_groups(e):
            body = "(" + "".join(f"({code}, {width}), " for code, width in items) + ")"
            parts.append(f"*{body}" if guard is None else f"*({body} if {guard} else ())")
        if not parts:
            return "()"
        return "(" + ", ".join(parts) + ",)"

    def packed_groups(self, e: ast.Expression) -> str:
        """The field list as `(value, width)` per run of fields (`(0, 0)` for a run of an invalid header), each
        run's fields packed MSB first into one int by straight-line shifts: the argument of `_csum16g`, which
        needs no per-field loop and no bytes."""
        parts = []
        for guard, items in self.field_groups(e):
            total = sum(w for _, w in items)
            shift = total
            terms = []
            for code, width in items:
                shift -= width
                term = f"({code} & {hex((1 << width) - 1)})"
                terms.append(term if shift == 0 else f"({term} << {shift})")
            packed = f"({' | '.join(terms)}, {total})"
            parts.append(packed if guard is None else f"({packed} if {guard} else (0, 0))")
        return ", ".join(parts)

    def csum16(self, e: ast.Expression) -> str:
        """The Internet checksum of a field list. One run of fields (the usual IPv4 header): `_csum16s` of the
        fields' sum, each shifted by its bit distance from the padded end mod 16 (2^16 = 1 mod 0xFFFF, so that sum
        and the packed string agree mod 0xFFFF, and both are zero only when every field is): a dozen adds instead
        of packing a 144-bit int and a call with a loop. Several runs: `_csum16g` of the packed runs."""
        groups = self.field_groups(e)
        if len(groups) != 1:
            return f"_csum16g({self.packed_groups(e)})"
        guard, items = groups[0]
        total = sum(w for _, w in items)
        shift = total + (-total % 16)
        terms = []
        for code, width in items:
            shift -= width
            term = f"({code} & {hex((1 << width) - 1)})"
            terms.append(term if shift % 16 == 0 else f"({term} << {shift % 16})")
        value = f"_csum16s({' + '.join(terms) or '0'})"
        return value if guard is None else f"({value} if {guard} else 0xffff)"

    def value_list(self, e: ast.Expression) -> list[str]:
        """The scalar values of a struct or list expression, in order (digests, log_msg)."""
        t = self.typed.types.get(e)
        if isinstance(e, ast.ListExpression):
            out: list[str] = []
            for item in e.items:
                out += self.value_list(item)
            return out
        if isinstance(e, ast.StructExpression):
            out = []
            for f in e.fields:
                out += self.value_list(f.value)
            return out
        if isinstance(t, (StructT, HeaderT)):
            code = self.x.expr(e)
            return [_int(path, ft) for path, ft in leaf_fields(t, code)]
        return [_int(self.x.expr(e), t)]


def _int(code: str, t: Any) -> str:
    return f"int({code})" if isinstance(underlying(t), BoolT) else code


def out_scalar_params(params: tuple[ast.Parameter, ...], typed: Any) -> list[ast.Parameter]:
    out = []
    for p in params:
        var = typed.decl_vars.get(p)
        if p.direction in ("out", "inout") and var is not None and not is_object(var.type):
            out.append(p)
    return out


__all__ = ["BlockGen", "out_scalar_params"]
