"""The generated pipeline module: layout classes, helpers and `build(rt) -> Program` (docs/architecture.md).

`generate_module(pipeline, symbols)` returns Python source. `build(rt)` binds the runtime objects (register cell
lists, tables, counters, hash functions) to closure variables once, defines one function per parser, control,
action and table instance, and returns a `Program` with the v1model entry points the engine calls.
"""

from __future__ import annotations

import re
from typing import Any

from p4switch.codegen.blocks import BlockGen, out_scalar_params
from p4switch.codegen.exprs import CodegenError
from p4switch.codegen.externs import HASH_NAMES, ExternGen
from p4switch.codegen.layout import LayoutBuilder, LayoutError, class_name, default_value, is_object, pyname
from p4switch.codegen.names import py_ident, py_str
from p4switch.frontend import ast
from p4switch.frontend.elaborate import V1MODEL_ROLES, BlockInstance, Pipeline, local_name, qualify
from p4switch.frontend.scope import Var
from p4switch.frontend.symbols import IdPrefix, SymbolTable
from p4switch.frontend.types import (
    BitsT,
    BoolT,
    ExternT,
    HeaderT,
    P4Type,
    StackT,
    StructLikeT,
    StructT,
    underlying,
    width_of,
)
from p4switch.runtime.profiles import GROUP_ACTION


def invalidate_headers(g: BlockGen, code: str, t: P4Type) -> None:
    """Make every header in the value at `code` invalid (struct fields, stack elements, the value itself)."""
    if isinstance(t, HeaderT):
        g.w(f"{code}._v = False")
    elif isinstance(t, StackT):
        g.w(f"for _h in {code}.e:")
        g.w("    _h._v = False")
        g.w(f"{code}.ni = 0")
    elif isinstance(t, StructT):
        for f, ft in t.fields:
            invalidate_headers(g, f"{code}.{pyname(f)}", ft)


RUNTIME_HELPERS = '''
class _PErr(Exception):
    """A parser error: `code` is the P4 error's number (BMv2's order of declaration)."""

    def __init__(self, code):
        self.code = code


class _Exit(Exception):
    """`exit`: ends the current top-level control."""


def _shl(a, b, w):
    return ((a << b) & ((1 << w) - 1)) if b < w else 0


def _csum16s(s):
    """The Internet checksum of a bit string given as the sum of its fields, each shifted by its distance from the
    (16-bit padded) end mod 16: the string is that sum mod 0xFFFF (2^16 = 1 mod 0xFFFF), zero only if all is."""
    return ~((s - 1) % 0xFFFF + 1) & 0xFFFF if s else 0xFFFF


def _ssat(a, b, w, neg=None):
    s = 1 << (w - 1)
    x = ((a ^ s) - s) + ((b ^ s) - s) if neg is None else ((a ^ s) - s) - ((neg ^ s) - s)
    if x > s - 1:
        x = s - 1
    elif x < -s:
        x = -s
    return x & ((1 << w) - 1)


def _eq(a, b):
    if not hasattr(type(a), '__slots__'):
        return bool((a == b).all()) if hasattr(a, 'shape') else a == b
    cls = type(a)
    if cls.__name__.startswith('K_'):
        return all(_eq(x, y) for x, y in zip(a.e, b.e))
    slots = cls.__slots__
    if '_v' in slots:
        if a._v != b._v:
            return False
        if not a._v:
            return True
    names = cls._eqf if hasattr(cls, '_eqf') else [s for s in slots if s != '_v']
    return all(_eq(getattr(a, s), getattr(b, s)) for s in names)


def _div(a, b):
    return a // b if b else 0


def _mod(a, b):
    return a % b if b else 0


def _last(s):
    if s.ni == 0:
        raise _PErr(_ERR_STACK)
    return s.e[s.ni - 1]


def _lastc(s):
    return s.e[s.ni - 1] if s.ni else s.e[0]


def _sidx(s, i):
    """A run-time stack index; out of range gives a detached invalid element (reads see zeros, writes vanish)."""
    if i < s.size:
        return s.e[i]
    return type(s.e[0])()


def _next(s):
    if s.ni >= s.size:
        raise _PErr(_ERR_STACK)
    return s.e[s.ni]


def _la(d, p, n, w):
    nb = (w + 7) >> 3
    if p + nb > n:
        raise _PErr(_ERR_SHORT)
    return _ifb(d[p:p + nb], 'big') >> (nb * 8 - w)


def _lah(cls, extract, d, p, n, nb):
    if p + nb > n:
        raise _PErr(_ERR_SHORT)
    o = cls()
    extract(o, d, p)
    return o


def _adv(p, n, bits):
    nb = bits >> 3
    if p + nb > n:
        raise _PErr(_ERR_SHORT)
    return p + nb
'''


_CHAIN = re.compile(r"\b(p_[A-Za-z0-9_]+)\.([A-Za-z_][A-Za-z0-9_]*)\.")


def hoist_chains(lines: list[str], *, threshold: int = 3) -> list[str]:
    """Bind `p_x.field` to a local when a function uses it often as an object (`p_x.field.y`).

    Safe because generated code never rebinds an attribute that holds a header, struct or stack: assignments copy
    into the existing object (`assign`), so the object behind `p_h.vals` is the same for the whole call.
    """
    if not lines:
        return lines
    counts: dict[tuple[str, str], int] = {}
    for line in lines[1:]:
        for m in _CHAIN.finditer(line):
            counts[(m.group(1), m.group(2))] = counts.get((m.group(1), m.group(2)), 0) + 1
    hoisted = {key: f"_{key[0]}_{key[1]}" for key, n in counts.items() if n >= threshold}
    if not hoisted:
        return lines

    def replace(m: re.Match[str]) -> str:
        name = hoisted.get((m.group(1), m.group(2)))
        return f"{name}." if name else m.group(0)

    body = [_CHAIN.sub(replace, line) for line in lines[1:]]
    prologue = [f"    {name} = {obj}.{attr}" for (obj, attr), name in hoisted.items()]
    return [lines[0], *prologue, *body]


PARSER_STEP_LIMIT = 10_000


def has_cycle(states: tuple[ast.ParserState, ...]) -> bool:
    """Whether the parser's state graph has a loop (header stacks, TLV chains)."""
    edges: dict[str, set[str]] = {}
    for s in states:
        targets: set[str] = set()
        tr = s.transition
        if tr is not None and isinstance(tr.target, ast.Name):
            targets.add(tr.target.name)
        elif tr is not None and isinstance(tr.target, ast.SelectExpression):
            targets.update(c.state.name for c in tr.target.cases)
        edges[s.name] = targets
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(name: str) -> bool:
        if name in visiting:
            return True
        if name in done or name not in edges:
            return False
        visiting.add(name)
        found = any(visit(t) for t in edges[name])
        visiting.discard(name)
        done.add(name)
        return found

    return any(visit(name) for name in edges)


class ModuleGen:
    def __init__(self, pipeline: Pipeline, symbols: SymbolTable) -> None:
        self.pipeline = pipeline
        self.typed = pipeline.typed
        self.symbols = symbols
        self.externs = ExternGen(self)
        self.current: ast.Node = self.typed.program
        self.layout = LayoutBuilder()
        self.bindings: list[str] = []
        self.binding_names: dict[Any, str] = {}
        self.funcs: list[str] = []
        self.empty_controls: set[str] = set()  # block functions of controls that do nothing
        self.block_index: dict[int, int] = {}
        self.block_gens: dict[int, BlockGen] = {}
        self.generated_callables: dict[Any, str] = {}
        self.generated_tables: dict[Any, str] = {}
        self.local_actions: set[tuple[int, ast.ActionDeclaration]] = set()

    # ---------------------------------------------------------------------------------------------- lookups
    def error_code(self, name: str) -> int:
        try:
            return self.typed.error_codes.index(name)
        except ValueError:
            return 0

    def action_id(self, decl: Any) -> int:
        name = self.pipeline.action_names.get(decl)
        if name is None or not self.symbols.has(IdPrefix.ACTION, name):
            return 0
        return self.symbols.id_of(IdPrefix.ACTION, name)

    def digest_name(self, t: P4Type | None) -> str:
        if isinstance(t, StructT):
            return local_name(t.decl) if t.decl is not None else t.name
        return str(t)

    def instance_size(self, var: Var) -> int:
        info = var.value
        node = var.node
        if isinstance(node, ast.Instantiation) and node.args:
            size = self.typed.consts.get(node.args[0].value)
            if isinstance(size, int):
                return size
        return int(info) if isinstance(info, int) else 0

    def meter_units(self, var: Any) -> str:
        return "ctx.sm.packet_length"

    def bind(self, key: Any, hint: str, code: str) -> str:
        name = self.binding_names.get(key)
        if name is None:
            name = f"{hint}{len(self.binding_names)}"
            self.binding_names[key] = name
            self.bindings.append(f"{name} = {code}")
        return name

    def instance_binding(self, block: BlockInstance, var: Var, node: ast.Node) -> str:
        inst = var.node
        t = var.type
        if not isinstance(t, ExternT) or inst is None:
            raise CodegenError(node, f"{var.name}: cannot use this instance here")
        owner = self.owner_block(block, inst)
        cp_name = qualify(owner.prefix, inst)
        if t.name == "register":
            return self.bind(("reg", cp_name), "R", f"S.registers[{py_str(cp_name)}].cells")
        if t.name == "counter":
            return self.bind(("ctr", cp_name), "C", f"S.counters[{py_str(cp_name)}]")
        if t.name == "direct_counter":
            return self.bind(("dctr", cp_name), "DC", f"S.direct_counters[{py_str(cp_name)}]")
        if t.name == "meter":
            return self.bind(("mtr", cp_name), "M", f"S.meters[{py_str(cp_name)}]")
        if t.name == "direct_meter":
            return self.bind(("dmtr", cp_name), "DM", f"S.direct_meters[{py_str(cp_name)}]")
        if t.name == "value_set":
            return self.bind(("vs", cp_name), "VS", f"S.value_sets[{py_str(cp_name)}]")
        if t.name == "Checksum16":
            return "None"
        raise CodegenError(node, f"extern {t.name} is not supported by this target")

    def owner_block(self, block: BlockInstance, inst: Any) -> BlockInstance:
        if inst in block.decl.locals:
            return block
        if any(d is inst for d in self.typed.program.declarations):
            # a program-scope instance: one object for every block, named without a prefix (elaborate)
            return BlockInstance(block.decl, "")
        return block

    def callable_name(self, g: BlockGen, decl: Any) -> str:
        if isinstance(decl, ast.ActionDeclaration):
            if self.is_local_action(g.block, decl):
                return self.action_fn(g, decl)
            return self.global_action_fn(g, decl)
        if isinstance(decl, ast.FunctionDeclaration):
            return self.function_fn(g, decl)
        raise CodegenError(decl, "not callable")

    def is_local_action(self, block: BlockInstance, decl: ast.ActionDeclaration) -> bool:
        return decl in block.decl.locals

    def returns_void(self, decl: ast.FunctionDeclaration) -> bool:
        return isinstance(decl.return_type, ast.VoidType)

    def meta_type(self) -> P4Type:
        return self.param_type(self.pipeline.blocks["ingress"], 1)

    def synthetic_field_list(self, names: list[str]) -> int:
        """A field list for a deprecated extern's data: the same fields give the same id."""
        lists = self.pipeline.field_lists
        for key, value in lists.items():
            if key >= 1 << 16 and value == names:
                return key
        key = (1 << 16) + sum(1 for k in lists if k >= 1 << 16)
        lists[key] = list(names)
        return key

    def block_fn(self, block: BlockInstance) -> str:
        return f"c_{self.block_index[id(block)]}"

    # ---------------------------------------------------------------------------------------- callables
    def action_fn(self, g: BlockGen, decl: ast.ActionDeclaration) -> str:
        key = (id(g.block), decl)
        if key in self.generated_callables:
            return self.generated_callables[key]
        name = f"a_{g.index}_{decl.name}"
        self.generated_callables[key] = name
        self._callable(g, decl, name, f"ctx{g.params_sig}, cl", void=True)
        return name

    def global_action_fn(self, g: BlockGen, decl: ast.ActionDeclaration) -> str:
        key = ("global", decl)
        if key in self.generated_callables:
            return self.generated_callables[key]
        name = f"ga_{decl.name}"
        self.generated_callables[key] = name
        self._callable(g, decl, name, "ctx", void=True)
        return name

    def function_fn(self, g: BlockGen, decl: ast.FunctionDeclaration) -> str:
        key = ("function", decl)
        if key in self.generated_callables:
            return self.generated_callables[key]
        name = f"f_{decl.name}"
        self.generated_callables[key] = name
        self._callable(g, decl, name, "ctx", void=self.returns_void(decl))
        return name

    def _callable(self, g: BlockGen, decl: Any, name: str, head: str, *, void: bool) -> None:
        """Generate an action or function as a closure; out/inout scalars come back as return values."""
        saved = (g.lines, g.level)
        g.lines, g.level = [], 0
        params = []
        for p in decl.params:
            var = self.typed.decl_vars[p]
            pname = py_ident(f"a_{p.name}")
            g.var_loc[var] = pname
            params.append(pname)
        g.w(f"def {py_ident(name)}({head}{''.join(', ' + p for p in params)}):")
        g.level += 1
        outs = [(g.var_loc[self.typed.decl_vars[p]], self.typed.decl_vars[p].type)
                for p in out_scalar_params(decl.params, self.typed)]
        g.copy_out.append(outs)
        g.return_value.append(not void)
        try:
            if outs:  # `exit` still copies out/inout parameters back (P4_16 exit statement): the caller stores them
                g.w("try:")
                g.level += 1
                g.w("pass")
            g.block_stmts(decl.body.statements)
            if outs:
                g.level -= 1
                g.w("except _Exit as _x:")
                g.w(f"    _x.outs = ({''.join(code + ', ' for code, _ in outs)})")
                g.w("    raise")
                g.w("return " + ", ".join(code for code, _ in outs) if len(outs) > 1 or not void
                    else f"return {outs[0][0]}")
        finally:
            g.copy_out.pop()
            g.return_value.pop()
        g.level -= 1
        g.w("")
        self.funcs += hoist_chains(g.lines)
        g.lines, g.level = saved

    def table_fn(self, g: BlockGen, table: ast.TableDeclaration) -> str:
        key = (id(g.block), table)
        if key in self.generated_tables:
            return self.generated_tables[key]
        name = f"t_{g.index}_{table.name}"
        self.generated_tables[key] = name
        cp_name = self.pipeline.table_names.get((g.block.prefix, table), qualify(g.block.prefix, table))
        tb = self.bind(("tbl", cp_name), "TB", f"S.tables[{py_str(cp_name)}]")
        saved = (g.lines, g.level)
        g.lines, g.level = [], 0
        g.w(f"def {name}(ctx{g.params_sig}, cl):")
        g.level += 1
        props = {p.name: p for p in table.properties}
        keys = []
        selector_keys: list[tuple[str, int]] = []  # (code, width): the selector's hash input, in key order
        key_prop = props.get("key")
        if isinstance(key_prop, ast.KeyProperty):
            for ke in key_prop.elements:
                code = g.x.expr(ke.expr)
                kt = self.typed.types[ke.expr]
                if isinstance(underlying(kt), BoolT):
                    code = f"int({code})"
                if ke.match_kind == "selector":
                    selector_keys.append((code, width_of(kt) or 1))
                else:
                    keys.append(code)
        g.w(f"hit, aid, args, entry = {tb}.lookup(({''.join(k + ', ' for k in keys)}))")
        model = next((t for t in self.pipeline.model.tables if t.name == cp_name), None)
        if model is not None and model.implementation:
            self.selector_code(g, tb, model.implementation, selector_keys)
        if model is not None and model.direct_counter:
            dc = self.bind(("dctr", model.direct_counter), "DC", f"S.direct_counters[{py_str(model.direct_counter)}]")
            g.w(f"{dc}.count(entry, ctx.sm.packet_length)")
        if model is not None and model.direct_meter:
            dm = self.bind(("dmtr", model.direct_meter), "DM", f"S.direct_meters[{py_str(model.direct_meter)}]")
            g.w(f"cl._dm = {dm}.execute(entry, ctx.sm.packet_length, _rt.now_us())")
        actions = props.get("actions")
        first = True
        if isinstance(actions, ast.ActionsProperty):
            for ref in actions.actions:
                decl = self.typed.refs.get(ref)
                if not isinstance(decl, ast.ActionDeclaration):
                    continue
                aid = self.action_id(decl)
                fn = self.callable_name(g, decl)
                prefix = f"ctx{g.params_sig}, cl" if self.is_local_action(g.block, decl) else "ctx"
                dir_args = [g.x.expr(a.value) for a in (ref.args or ())]
                call_args = "".join(", " + a for a in dir_args)
                has_data = any(p.direction is None for p in decl.params)
                g.w(f"{'if' if first else 'elif'} aid == {aid}:")
                first = False
                g.level += 1
                invocation = f"{fn}({prefix}{call_args}{', *args' if has_data else ''})"
                outs = out_scalar_params(decl.params, self.typed)
                # out/inout parameters bound in the actions list: written back to their arguments, as for a call
                targets = [(ref.args or ())[decl.params.index(p)].value for p in outs]
                g.call_copy_back(invocation, [None if isinstance(t, ast.DontCare) else t for t in targets], 0)
                g.level -= 1
        g.w("return hit, aid")
        g.level -= 1
        g.w("")
        self.funcs += hoist_chains(g.lines)
        g.lines, g.level = saved
        return name

    def selector_code(self, g: BlockGen, tb: str, implementation: str, selector_keys: list[tuple[str, int]]) -> None:
        """An entry pointing at a group: BMv2 hashes the selector keys (field_bytes, MSB first) with the selector's
        algorithm and the group picks a member from the hash (`ProfileState.select`)."""
        profile = next((p for p in self.pipeline.model.action_profiles if p.name == implementation), None)
        if profile is None or not profile.with_selector:
            return
        algo = HASH_NAMES.get(profile.algorithm, profile.algorithm)
        widths = tuple(width for _, width in selector_keys)
        pack = self.bind(("pack", widths), "PK", f"_rt.field_packer({widths!r})")
        select = self.bind(("select", implementation), "SEL", f"{tb}.profile.select")
        g.w(f"if aid == {GROUP_ACTION}:")  # the hasher is looked up per packet: custom CRCs can be reconfigured
        g.w(f"    aid, args = {select}(args[0], _hasher({algo!r})({pack}({', '.join(c for c, _ in selector_keys)})))")

    # ----------------------------------------------------------------------------------------------- blocks
    def control(self, g: BlockGen) -> None:
        decl = g.decl
        assert isinstance(decl, ast.ControlDeclaration)
        saved = (g.lines, g.level)
        g.lines, g.level = [], 0
        scalar_params = [(p, self.typed.decl_vars[p]) for p in decl.params
                         if not is_object(self.typed.decl_vars[p].type)
                         and not (isinstance(self.typed.decl_vars[p].type, ExternT))]
        extra = ", _sc=()" if scalar_params else ""
        g.w(f"def {self.block_fn(g.block)}(ctx{g.params_sig}{extra}):")
        g.level += 1
        needs_cl = bool(g.cl_fields) or any(
            isinstance(p, ast.TableProperty) and p.name == "meters"
            for t in decl.locals if isinstance(t, ast.TableDeclaration) for p in t.properties)
        g.w(f"cl = {g.cl_class}()" if needs_cl else "cl = None")
        for i, (p, _) in enumerate(scalar_params):
            g.w(f"if len(_sc) > {i}: cl.p_{p.name} = _sc[{i}]")
        inits = [local for local in decl.locals if isinstance(local, ast.VariableDeclaration) and local.init is not None]
        for local in inits:
            var = self.typed.decl_vars[local]
            assert local.init is not None
            g.assign_to(g.var_loc[var], var.type, local.init)
        if scalar_params:
            outs = "(" + "".join(f"cl.p_{p.name}, " for p, _ in scalar_params) + ")"
            g.control_return = f"return {outs}"
            # `exit` inside a nested control still copies its inout/out parameters back (p4c inlines controls)
            g.w("try:")
            g.level += 1
            g.block_stmts(decl.body.statements)
            g.level -= 1
            g.w("except _Exit as _x:")
            g.w(f"    _x.outs = {outs}")
            g.w("    raise")
            g.w(g.control_return)
        else:
            g.block_stmts(decl.body.statements)
        g.level -= 1
        g.w("")
        if not needs_cl and not scalar_params and not inits and not any(map(_does_something, decl.body.statements)):
            self.empty_controls.add(self.block_fn(g.block))  # its entry point skips the call (entry_points)
        self.funcs += hoist_chains(g.lines)
        g.lines, g.level = saved

    def cl_class_source(self, g: BlockGen) -> list[str]:
        fields = [n for n, _ in g.cl_fields] + ["_dm"]
        lines = [f"class {g.cl_class}:", f"    __slots__ = ({''.join(repr(f) + ', ' for f in fields)})", "",
                 "    def __init__(self):"]
        for n, t in g.cl_fields:
            lines.append(f"        self.{n} = {default_value(t)}")
        lines += ["        self._dm = 0", "", ""]
        return lines

    def parser(self, g: BlockGen) -> None:
        decl = g.decl
        assert isinstance(decl, ast.ParserDeclaration)
        saved = (g.lines, g.level)
        g.lines, g.level = [], 0
        sub = g.block is not self.pipeline.blocks["parser"]
        scalars = [f for f, _ in g.cl_fields if f.startswith("p_")]
        if sub:
            # a sub-parser: runs at the caller's cursor `p` over the same `d`/`n`, returns the new cursor and its
            # scalar parameters; parser errors propagate to the top-level parser (see BlockGen.subparser_apply)
            g.w(f"def {self.block_fn(g.block)}(ctx, d, n, p{g.params_sig}, _sc):")
            g.level += 1
            g.w(f"cl = {g.cl_class}()")
            for i, f in enumerate(scalars):
                g.w(f"cl.{f} = _sc[{i}]")
            for prm in decl.params:
                if prm.direction == "out":  # P4_16 6.8: the headers of an `out` argument start invalid
                    var = self.typed.decl_vars[prm]
                    invalidate_headers(g, g.var_loc[var], var.type)
        else:
            g.w(f"def {self.block_fn(g.block)}(ctx{g.params_sig}):")
            g.level += 1
            g.w("cl = None")
            g.w("d = ctx.data")
            g.w("n = len(d)")
            g.w("p = 0")
            g.w("err = 0")
        states = {s.name: i for i, s in enumerate(sorted(decl.states, key=lambda s: s.name != "start"))}
        g.w("st = 0")
        g.w("if True:" if sub else "try:")
        g.level += 1
        for local in decl.locals:
            if isinstance(local, ast.VariableDeclaration):
                var = self.typed.decl_vars[local]
                name = g.bind_local(var)
                g.w(f"{name} = {default_value(var.type)}")
                if local.init is not None:
                    g.assign_to(name, var.type, local.init)
        for s in decl.states:
            for st in s.statements:
                if isinstance(st, ast.VariableDeclaration):
                    var = self.typed.decl_vars[st]
                    g.w(f"{g.bind_local(var)} = {default_value(var.type)}")
        cyclic = has_cycle(decl.states)
        if cyclic:
            g.w("steps = 0")
        g.w("while st >= 0:")
        g.level += 1
        if cyclic:
            # a parser loop that consumes nothing would spin forever; stop it with ParserTimeout instead
            g.w("steps += 1")
            g.w(f"if steps > {PARSER_STEP_LIMIT}:")
            g.w(f"    raise _PErr({self.error_code('ParserTimeout')})")
        ordered = sorted(decl.states, key=lambda s: states[s.name])
        for i, s in enumerate(ordered):
            g.w(f"{'if' if i == 0 else 'elif'} st == {states[s.name]}:")
            g.level += 1
            g.current_node = s
            for st in s.statements:
                if isinstance(st, ast.VariableDeclaration):
                    var = self.typed.decl_vars[st]
                    g.w(f"{g.var_loc[var]} = {default_value(var.type)}")
                    if st.init is not None:
                        g.assign_to(g.var_loc[var], var.type, st.init)
                else:
                    g.stmt(st)
            self.transition(g, s.transition, states)
            g.level -= 1
        g.level -= 2
        if sub:
            g.w("if st == -2:")
            g.w("    raise _PErr(0)  # reject: the top-level parser rejects, with no error of its own")
            g.w(f"return p, ({''.join('cl.' + f + ', ' for f in scalars)})")
        else:
            g.w("except _PErr as x:")
            g.w("    err = x.code")
            g.w("ctx.sm.parser_error = err")
            g.w("ctx.payload_offset = p")
        g.level -= 1
        g.w("")
        self.funcs += hoist_chains(g.lines)
        g.lines, g.level = saved

    def transition(self, g: BlockGen, tr: ast.TransitionStatement | None, states: dict[str, int]) -> None:
        def target(name: ast.Name) -> str:
            if name.name == "accept":
                return "st = -1"
            if name.name == "reject":
                return "st = -2"
            return f"st = {states[name.name]}"

        if tr is None:
            g.w("st = -2")
            return
        if isinstance(tr.target, ast.Name):
            g.w(target(tr.target))
            return
        sel = tr.target
        assert isinstance(sel, ast.SelectExpression)
        keys = []
        for k in sel.keys:
            tmp = g.tmp("k")
            code = g.x.expr(k)
            if isinstance(underlying(self.typed.types[k]), BoolT):
                code = f"int({code})"
            g.w(f"{tmp} = {code}")
            keys.append((tmp, self.typed.types[k]))
        first = True
        default_done = False
        for case in sel.cases:
            cond = self.case_condition(g, case.keyset, keys)
            if cond == "True":
                g.w("else:" if not first else "if True:")
                g.w(f"    {target(case.state)}")
                default_done = True
                break
            g.w(f"{'if' if first else 'elif'} {cond}:")
            g.w(f"    {target(case.state)}")
            first = False
        if not default_done:
            no_match = f"raise _PErr({self.error_code('NoMatch')})"
            g.w(no_match if first else "else:")
            if not first:
                g.w(f"    {no_match}")

    def case_condition(self, g: BlockGen, ks: ast.Expression, keys: list[tuple[str, P4Type]]) -> str:
        if isinstance(ks, (ast.DefaultExpression, ast.DontCare)):
            return "True"
        elements: list[ast.Expression]
        if isinstance(ks, ast.TupleKeyset):
            elements = list(ks.elements)
        elif isinstance(ks, ast.ListExpression) and len(keys) > 1:
            elements = list(ks.items)
        elif len(keys) > 1 and isinstance(ks, ast.Name):
            vs = g.x.expr(ks)
            return f"{vs}.matches(({''.join(k + ', ' for k, _ in keys)}))"
        else:
            elements = [ks]
        conds = []
        for el, (k, kt) in zip(elements, keys, strict=False):
            c = self.element_condition(g, el, k, kt)
            if c != "True":
                conds.append(c)
        return " and ".join(conds) if conds else "True"

    def element_condition(self, g: BlockGen, el: ast.Expression, k: str, kt: P4Type) -> str:
        if isinstance(el, (ast.DefaultExpression, ast.DontCare)):
            return "True"
        ref = self.typed.refs.get(el) if isinstance(el, ast.Name) else None
        if isinstance(ref, Var) and isinstance(ref.type, ExternT) and ref.type.name == "value_set":
            return f"{g.x.expr(el)}.matches(({k},))"
        ut = underlying(kt)
        if isinstance(el, ast.BinaryOp) and el.op == "&&&":
            value = g.x.expr(el.left)
            m = g.x.expr(el.right)
            return f"({k} & {m}) == ({value} & {m})"
        if isinstance(el, ast.BinaryOp) and el.op == "..":
            lo = g.x.expr(el.left)
            hi = g.x.expr(el.right)
            if isinstance(ut, BitsT) and ut.signed:
                s = hex(1 << (ut.width - 1))
                return f"({lo} ^ {s}) <= ({k} ^ {s}) <= ({hi} ^ {s})"
            return f"{lo} <= {k} <= {hi}"
        return f"{k} == {g.x.expr(el)}"

    # ------------------------------------------------------------------------------------------------ module
    def generate(self) -> str:
        blocks = self.pipeline.blocks
        ordered: list[BlockInstance] = []

        def add(b: BlockInstance) -> None:
            ordered.append(b)
            for c in b.children:
                add(c)

        for role in V1MODEL_ROLES:
            add(blocks[role])
        for i, b in enumerate(ordered):
            self.block_index[id(b)] = i
        for t in self.typed.types.values():
            if isinstance(t, (StructLikeT, StackT)):
                self.layout.add(t)
        for var in self.typed.decl_vars.values():
            self.layout.add(var.type)
        try:
            layout_src = self.layout.source()
        except LayoutError as exc:
            raise CodegenError(self.typed.program, str(exc)) from None
        gens = [BlockGen(self, b, self.block_index[id(b)]) for b in ordered]
        for g in gens:
            self.current = g.decl
            if isinstance(g.decl, ast.ParserDeclaration):
                self.parser(g)
            else:
                self.control(g)
        if self.layout.custom:  # the vectoriser moved header field runs into numpy arrays (codegen/vector.py)
            layout_src = self.layout.source()
        header_t = self.param_type(blocks["parser"], 1)
        meta_t = self.param_type(blocks["parser"], 2)
        sm_t = self.param_type(blocks["parser"], 3)
        out: list[str] = [
            '"""Generated by p4ina compile: the pipeline module of the embedded v1model switch. Do not edit."""',
            "",
            "import struct as _struct",
            "",
            "from p4switch.exceptions import PacketProcessingError as _AssertFailed",
            "from p4switch.runtime.context import PacketContext as _PacketContext",
            "from p4switch.runtime.hashes import csum16_groups as _csum16g",
            "from p4switch.runtime.hashes import field_bytes as _fbytes",
            "",
            "_ifb = int.from_bytes",
            f"_ERR_SHORT = {self.error_code('PacketTooShort')}",
            f"_ERR_STACK = {self.error_code('StackOutOfBounds')}",
            f"ERRORS = {list(self.typed.error_codes)!r}",
            "",
        ]
        out += RUNTIME_HELPERS.splitlines()
        out += ["", ""]
        out += layout_src
        out += self.mk_functions()
        for g in gens:
            out += self.cl_class_source(g)
        out += [
            "class Program:",
            "    __slots__ = ('init', 'parse', 'verify_checksum', 'ingress', 'egress', 'compute_checksum', 'deparse',",
            "                 'clone_ctx', 'save_field_list', 'restore_field_list', 'reset_metadata', 'errors',",
            "                 'egress_noop', 'port_ingress')",
            "",
            "",
            "def build(rt):",
            '    """Bind the runtime state once and return the pipeline entry points."""',
            "    _rt = rt",
            "    S = rt.state",
            "    _hash_range = rt.hash_range",
            "    _hasher = rt.hasher",
        ]
        out += ["    " + b for b in self.bindings]
        out += ["    " + line if line else "" for line in self.funcs]
        out += self.entry_points(header_t, meta_t, sm_t)
        return "\n".join(out) + "\n"

    def mk_functions(self) -> list[str]:
        """`T.mk(*values)` constructors used by list and structure expressions."""
        lines: list[str] = []
        for name in self.layout.order:
            t = self.layout.types[name]
            if isinstance(t, StackT) or not isinstance(t, StructLikeT):
                continue
            fields = [pyname(f) for f, _ in t.fields]
            lines.append(f"def _mk_{name}({', '.join(fields)}):")
            lines.append(f"    o = {name}()")
            for (_f, ft), pf in zip(t.fields, fields, strict=False):
                if is_object(ft):
                    lines.append(f"    o.{pf}.assign({pf})")
                else:
                    lines.append(f"    o.{pf} = {pf}")
            if isinstance(t, HeaderT):
                lines.append("    o._v = True")
            lines += ["    return o", "", "", f"{name}.mk = staticmethod(_mk_{name})", "", ""]
        return lines

    def deparser_args(self) -> str:
        args = []
        for p in self.pipeline.blocks["deparser"].decl.params:
            t = self.typed.decl_vars[p].type
            args.append("_o" if isinstance(t, ExternT) else "ctx.h")
        return ", ".join(args)

    def param_type(self, block: BlockInstance, index: int) -> P4Type:
        return self.typed.decl_vars[block.decl.params[index]].type

    def entry_points(self, header_t: P4Type, meta_t: P4Type, sm_t: P4Type) -> list[str]:
        b = self.pipeline.blocks

        def call(role: str, args: str) -> list[str]:
            return [f"        {self.block_fn(b[role])}(ctx{args})"]

        lines = [
            "    def init(ctx):",
            f"        ctx.h = {class_name(header_t)}()",
            f"        ctx.m = {class_name(meta_t)}()",
            f"        ctx.sm = {class_name(sm_t)}()",
            "",
            "    def parse(ctx):",
            f"        {self.block_fn(b['parser'])}(ctx, ctx.h, ctx.m, ctx.sm)",
            "",
        ]
        for role, args in (("verify_checksum", ", ctx.h, ctx.m"), ("ingress", ", ctx.h, ctx.m, ctx.sm"),
                           ("egress", ", ctx.h, ctx.m, ctx.sm"), ("compute_checksum", ", ctx.h, ctx.m")):
            if self.block_fn(b[role]) in self.empty_controls:
                # an empty control (most programs' checksum controls): no call, no handler, per packet
                lines += [f"    def {role}(ctx):", "        pass", ""]
                continue
            lines += [f"    def {role}(ctx):", "        try:"]
            lines += ["    " + x for x in call(role, args)]
            lines += ["        except _Exit:", "            pass", ""]
        lines += self.port_ingress(header_t, meta_t, sm_t)
        field_lists = self.pipeline.field_lists
        lines += [
            "    def deparse(ctx):",
            "        _o = []",
            f"        {self.block_fn(b['deparser'])}(ctx, {self.deparser_args()})",
            "        _o.append(ctx.data[ctx.payload_offset:])",
            "        return b''.join(_o)",
            "",
            "    def clone_ctx(ctx):",
            "        c = _PacketContext(ctx.data, packet_id=ctx.packet_id, copy_id=ctx.copy_id)",
            "        c.payload_offset = ctx.payload_offset",
            "        c.h = ctx.h.copy()",
            "        c.m = ctx.m.copy()",
            "        c.sm = ctx.sm.copy()",
            "        return c",
            "",
            f"    _field_lists = {dict((k, [pyname(f) for f in v]) for k, v in field_lists.items())!r}",
            "",
            "    def save_field_list(ctx, n):",
            "        m = ctx.m",
            "        out = []",
            "        for f in _field_lists.get(n, ()):",
            "            v = getattr(m, f)",
            "            out.append((f, v.copy() if hasattr(v, 'copy') else v))",
            "        return tuple(out)",
            "",
            "    def restore_field_list(ctx, saved):",
            "        m = ctx.m",
            "        for f, v in saved:",
            "            setattr(m, f, v.copy() if hasattr(v, 'copy') else v)",
            "",
            "    def reset_metadata(ctx):",
            f"        ctx.m = {class_name(meta_t)}()",
            "",
            "    prog = Program()",
            "    prog.init = init",
            "    prog.parse = parse",
            "    prog.verify_checksum = verify_checksum",
            "    prog.ingress = ingress",
            "    prog.egress = egress",
            "    prog.compute_checksum = compute_checksum",
            "    prog.deparse = deparse",
            "    prog.clone_ctx = clone_ctx",
            "    prog.save_field_list = save_field_list",
            "    prog.restore_field_list = restore_field_list",
            "    prog.reset_metadata = reset_metadata",
            "    prog.errors = ERRORS",
            "    prog.port_ingress = port_ingress",
            # the engine skips egress's metadata when nothing can read it (v1model.V1Model.egress)
            f"    prog.egress_noop = {self.block_fn(b['egress']) in self.empty_controls}",
            "    return prog",
        ]
        return lines


    def port_ingress(self, header_t: P4Type, meta_t: P4Type, sm_t: P4Type) -> list[str]:
        """`port_ingress(ctx, port, ts, length)`: `init`, the standard metadata the engine gives a packet from a
        port (`V1Model.ingress_frame`), `parse`, `verify_checksum` and `ingress` in one frame, the three structs
        held in locals. Each separate entry point costs a call and the reads of `ctx.h`/`ctx.m`/`ctx.sm`, about
        a microsecond per packet in all; nothing a block does rebinds those three (only the engine does, through
        `reset_metadata`), so the locals stay what the separate entry points would read."""
        b = self.pipeline.blocks
        lines = [
            "    def port_ingress(ctx, port, ts, length):",
            f"        h = ctx.h = {class_name(header_t)}()",
            f"        m = ctx.m = {class_name(meta_t)}()",
            f"        sm = ctx.sm = {class_name(sm_t)}()",
            "        sm.ingress_port = port",
            "        sm.ingress_global_timestamp = ts",
            "        sm.packet_length = length",
            f"        {self.block_fn(b['parser'])}(ctx, h, m, sm)",
        ]
        for role, args in (("verify_checksum", ", h, m"), ("ingress", ", h, m, sm")):
            if self.block_fn(b[role]) not in self.empty_controls:
                lines += ["        try:", f"            {self.block_fn(b[role])}(ctx{args})",
                          "        except _Exit:", "            pass"]
        return [*lines, ""]


def _does_something(st: ast.Statement) -> bool:
    """Whether a control's apply statement can do anything: all but `;` and blocks of nothing else (an empty
    control's entry point makes no call, `ModuleGen.entry_points`)."""
    if isinstance(st, ast.EmptyStatement):
        return False
    if isinstance(st, ast.BlockStatement):
        return any(map(_does_something, st.statements))
    return True


def generate_module(pipeline: Pipeline, symbols: SymbolTable) -> str:
    """Python source of the pipeline module for `pipeline` (raises CodegenError on unsupported constructs)."""
    return ModuleGen(pipeline, symbols).generate()


__all__ = ["BitsT", "CodegenError", "HeaderT", "generate_module"]
