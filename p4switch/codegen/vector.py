"""The vectoriser: runs of unrolled per-element statements -> numpy operations (docs/compiler.md, "The vectoriser").

SwitchML-style programs repeat one statement per element, written with macros: the same code except for which
register array and which header field it touches (`r##n.read(t, s); ... h.vals.v##n = t;`). Such a run of k lanes
becomes one pass of numpy code over a lane vector: the k fields are a slice of a numpy run in the header object
(decoded from the packet with `np.frombuffer`), the k register arrays are the columns of one numpy store
(`RuntimeState.register_store`, indexed `[cell, column]`). Values follow BMv2's integer semantics exactly
(`p4switch/runtime/vecops.py`: widths, wrap, saturation, signedness, shifts).

A run is vectorised only when the lanes cannot observe each other, so that running statement by statement over all
lanes equals running lane by lane: each lane owns its locals, its field and its register column; everything else
it reads is invariant in the run; the only shared writes are a flag set to an invariant value (any lane sets it)
and an accumulator (`x = x + e`, `|`, `^`: the reduction of the lanes) that nothing else in the run reads.
Anything else - another index per lane, mixed widths, a field of another header, a read of another lane's field,
an extern call - leaves the run to the scalar code generator, statement by statement, as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from p4switch.codegen.layout import class_name, has_varbit
from p4switch.codegen.runs import header_class
from p4switch.frontend import ast
from p4switch.frontend.elaborate import qualify
from p4switch.frontend.scope import Var
from p4switch.frontend.types import BitsT, BoolT, ExternT, HeaderT, P4Type, underlying, width_of

if TYPE_CHECKING:
    from p4switch.codegen.blocks import BlockGen
    from p4switch.codegen.module import ModuleGen

#: Fewer lanes than this stay scalar: below it numpy's per-call cost outweighs the per-element savings.
MIN_LANES = 16
_RUN_WIDTHS = (8, 16, 32)
_enabled = [True]
_recorders: list[list[tuple[int, str]]] = []


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Compile without the vectoriser inside this block (tests and benchmarks compare both code paths)."""
    _enabled.append(False)
    try:
        yield
    finally:
        _enabled.pop()


def options_key() -> str:
    """The code-generation options in force, for caches of generated code: a scalar build is never served for a
    vectorised one, or the reverse."""
    return "vector" if _enabled[-1] else "scalar"


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[int, str]]]:
    """Collect, for every run of at least MIN_LANES lanes compiled inside this block, (lanes, "vectorised" or the
    reason it stayed scalar): what tests and `p4ina bench` check the vectoriser decided."""
    log: list[tuple[int, str]] = []
    _recorders.append(log)
    try:
        yield log
    finally:
        _recorders.remove(log)


def _record(vectors: ModuleVectors, lanes: int, outcome: str) -> None:
    vectors.log.append((lanes, outcome))
    for log in _recorders:
        log.append((lanes, outcome))


class Reject(Exception):
    """The run does not have the vectorisable shape; `str(exc)` says why (tests check the reason)."""


@dataclass
class _Store:
    binding: str
    names: tuple[str, ...]


@dataclass
class ModuleVectors:
    """Per generated module: the register stores, the header runs in use, and what each run attempt decided."""

    stores: dict[str, tuple[_Store, int]] = field(default_factory=dict)
    runs: dict[str, tuple[HeaderT, set[int]]] = field(default_factory=dict)
    groups: int = 0
    log: list[tuple[int, str]] = field(default_factory=list)  # (lanes, "vectorised" or the reason it was not)


def module_vectors(mod: ModuleGen) -> ModuleVectors:
    state = getattr(mod, "_vectors", None)
    if state is None:
        state = ModuleVectors()
        mod._vectors = state  # type: ignore[attr-defined]
    return state


# -------------------------------------------------------------------------------------------------- header runs
def field_run(t: HeaderT, index: int) -> tuple[int, int, int] | None:
    """The maximal run of same-width byte-aligned `bit<W>`/`int<W>` fields (W in 8/16/32) holding field `index`:
    (first field, count, width), or None when that field cannot be part of a numpy run."""
    widths = [_run_width(ft) for _, ft in t.fields]
    w = widths[index]
    if w is None:
        return None
    lo = index
    while lo > 0 and widths[lo - 1] == w:
        lo -= 1
    hi = index
    while hi + 1 < len(widths) and widths[hi + 1] == w:
        hi += 1
    offset = sum(width_of(ft) or 0 for _, ft in t.fields[:lo])
    while offset % 8:  # the run must start on a byte: drop leading fields until it does
        offset += w
        lo += 1
        if lo > index:
            return None
    return lo, hi - lo + 1, w


def _run_width(t: P4Type) -> int | None:
    u = underlying(t)
    if isinstance(u, BitsT) and u.width in _RUN_WIDTHS:
        return u.width
    return None


def header_source(name: str, t: HeaderT, used: set[int]) -> list[str]:
    """Class and codecs of a header type whose used field runs live in numpy arrays (`codegen/runs.py`: lazily
    allocated, shared copy-on-write by copies); its other fields stay plain slots, and every run field is still
    reachable by name (`vecops.RunField`) for scalar code."""
    runs: dict[int, tuple[int, int]] = {}
    covered = -1  # every used field up to here is in a run found already (field_run gives each the same run)
    for index in sorted(used):
        if index <= covered:
            continue
        r = field_run(t, index)
        assert r is not None
        runs[r[0]] = (r[1], r[2])
        covered = r[0] + r[1] - 1
    return header_class(name, t, runs)


def _member_path(e: Any) -> bool:
    """Whether `e` is a name or a chain of members of one (`h.vals`): code that is a plain attribute path."""
    while isinstance(e, ast.Member):
        e = e.expr
    return isinstance(e, ast.Name)


def _walk(e: Any) -> Iterator[ast.Node]:
    if isinstance(e, ast.Node):
        yield e
        for f in dataclasses.fields(e):
            if f.name != "loc":
                yield from _walk(getattr(e, f.name))
    elif isinstance(e, tuple):
        for x in e:
            yield from _walk(x)


# ------------------------------------------------------------------------------------------------- the matcher
def _is_register(var: Any) -> bool:
    return (isinstance(var, Var) and var.kind == "instance" and isinstance(var.type, ExternT)
            and var.type.name == "register")


class _Matcher:
    """Structural equality of two statements up to the lane slots: register instance names and header fields.
    `slots` receives (template node, lane node) for every slot, in traversal order, equal or not."""

    def __init__(self, g: BlockGen) -> None:
        self.typed = g.typed

    def same(self, a: Any, b: Any, slots: list[tuple[Any, Any]], local_map: dict[Var, Var]) -> bool:
        if type(a) is not type(b):
            return False
        if isinstance(a, ast.Name):
            ra, rb = self.typed.refs.get(a), self.typed.refs.get(b)
            if _is_register(ra) and _is_register(rb):
                slots.append((a, b))
                return True
            if ra is rb:
                return ra is not None or a.name == b.name
            return isinstance(ra, Var) and local_map.get(ra) is rb
        if isinstance(a, ast.Member) and self._is_field(a):
            if not self._is_field(b):
                return False
            slots.append((a, b))
            return self.same(a.expr, b.expr, slots, local_map)
        if isinstance(a, ast.Node):
            for name in ast.node_fields(type(a)):  # all but the location
                if not self.same(getattr(a, name), getattr(b, name), slots, local_map):
                    return False
            if isinstance(a, ast.VariableDeclaration):
                va, vb = self.typed.decl_vars.get(a), self.typed.decl_vars.get(b)
                if va is None or vb is None or va.type != vb.type:
                    return False
                local_map[va] = vb
            return True
        if isinstance(a, tuple):
            return len(a) == len(b) and all(self.same(x, y, slots, local_map) for x, y in zip(a, b, strict=True))
        return bool(a == b)

    def _is_field(self, e: ast.Member) -> bool:
        t = self.typed.types.get(e.expr)
        return isinstance(t, HeaderT) and e.member in t.field_index


def run_length(g: BlockGen, stmts: tuple[ast.Statement, ...], i: int) -> tuple[int, list[list[tuple[Any, Any]]]]:
    """How many statements from `i` are lanes of `stmts[i]`, and each lane's slots."""
    m = _Matcher(g)
    template = stmts[i]
    own: list[tuple[Any, Any]] = []
    m.same(template, template, own, {})
    lanes = [own]
    j = i + 1
    while j < len(stmts):
        slots: list[tuple[Any, Any]] = []
        if not m.same(template, stmts[j], slots, {}) or len(slots) != len(own):
            break
        lanes.append(slots)
        j += 1
    return j - i, lanes


# ------------------------------------------------------------------------------------------------- the emitter
@dataclass
class _V:
    """A translated expression: `inv` (a scalar, as scalar code holds it: unsigned patterns), `vec` (a fresh lane
    vector) or `view` (a lane vector aliasing a field run or a register store: copy before keeping it)."""

    code: str
    kind: str
    t: P4Type
    #: for a cast that only reinterprets the container (`x.view(_vx.u32)` of an int<32> x): `x` itself, which a
    #: store into an unsigned run or register row of that container can take as it is (numpy's assignment casts
    #: same-size integers bit for bit), one `view` call fewer per store
    raw: str | None = None


@dataclass
class _FieldSlot:
    ref: str  # the lanes' fields: a numpy run of the header object, or a slice of it
    t: BitsT
    plain: bool = False  # `ref` is a whole run reached through members only (`p_h.vals._r0`: no index, no slice)


@dataclass
class _RegSlot:
    store: str
    cols: str  # "" when the lanes are every column of the store
    size: int
    t: BitsT

    def at(self, idx: str) -> str:
        return f"{self.store}[{idx}]" if not self.cols else f"{self.store}[{idx}, {self.cols}]"


@dataclass
class _RowRead:
    """A register row read into a lane local, as emitted with its copy (`line`, at `at`) and without (`uncopied`),
    and how the emitter went on to use the local: `uses` in all, `operands` of them as an operand of an operator
    that makes a fresh array; `escapes` once it is rebound or read after a write to its store."""

    at: int
    store: str
    uncopied: str  # the line, indented
    uses: int = 0
    operands: int = 0
    escapes: bool = False


@dataclass
class _Fresh:
    """A lane local bound to an array nothing else references (the fused saturating add's result), as of its
    binding: the emitter's count of the local's uses then (`base`) and how many uses since only copied it (an
    operand of an operator that makes a fresh array, a register write or a field store: `copied`)."""

    base: int
    copied: int = 0
    # a lane local rebound to a view of another `_Fresh` local (`t = (bit<W>)sat`): that local and its use count
    # then; it must see no later use either for a run to take the array (`rebind_run_stores`)
    alias: tuple[str, int] | None = None


@dataclass
class _RunStore:
    """A whole field run stored from a `_Fresh` local (`x[:] = local` at `at`) whose uses so far all copied it:
    when the emitter wrote no later use of the local (`uses` is still its count), the run takes the array itself
    (`rebind`, indented) instead of a copy."""

    at: int
    name: str
    uses: int
    rebind: str
    alias: tuple[str, int] | None = None


_VIEW = re.compile(r"(_l\w+)\.view\(_vx\.u(?:8|16|32)\)")


def _bits(t: P4Type) -> BitsT | None:
    u = underlying(t)
    return u if isinstance(u, BitsT) and 0 < u.width <= 32 else None


def _dtype(t: P4Type) -> str:
    if isinstance(underlying(t), BoolT):
        return "_vx.bool_"
    b = _bits(t)
    if b is None:
        raise Reject(f"values of type {t} are not vectorised")
    c = 8 if b.width <= 8 else 16 if b.width <= 16 else 32
    return f"_vx.{'i' if b.signed else 'u'}{c}"


#: Lane operators whose invariant operand becomes a 0-d array (`_Emitter.scalar`); saturating ops keep Python ints
#: (`vecops._wide` handles them), shifts take the amount as a number.
_SCALAR_OPS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&", "|", "^", "+", "-", "*"})
_LITERAL = re.compile(r"-?(?:0x[0-9a-fA-F]+|[0-9]+)")


def _container(b: BitsT) -> int:
    return 8 if b.width <= 8 else 16 if b.width <= 16 else 32


class _Emitter:
    """Translates one template statement for k lanes into vector code on `g` (raises Reject, emitting garbage that
    the caller rolls back)."""

    def __init__(self, g: BlockGen, lanes: list[list[tuple[Any, Any]]], gid: int) -> None:
        self.g = g
        self.typed = g.typed
        self.k = len(lanes)
        self.gid = gid
        self.mask: str | None = None
        self.local: dict[Var, tuple[str, P4Type]] = {}
        self.fields: dict[int, _FieldSlot] = {}
        self.regs: dict[int, _RegSlot] = {}
        self.shared_fields: set[int] = set()
        self.writes: dict[str, int] = {}
        self.reads: set[str] = set()
        self.new_stores: list[tuple[str, tuple[str, ...]]] = []
        self.new_runs: list[tuple[HeaderT, set[int]]] = []
        self.scalars: list[str] = []  # build-level 0-d arrays of invariant operands (`scalar`)
        # register rows read into locals (`declare_and_read`): local -> _RowRead; whether each copy can go is
        # decided from how the emitter uses the local afterwards (`elide_row_copies`)
        self.row_reads: dict[str, _RowRead] = {}
        # lane locals: uses written so far; those bound to an unshared array; field runs that may take such an
        # array instead of a copy of it (`rebind_run_stores`)
        self.local_uses: dict[str, int] = {}
        self.fresh: dict[str, _Fresh] = {}
        self.run_stores: list[_RunStore] = []
        self.written: set[str] = set()  # vector stores a statement of the run has written so far
        self.rebound: set[str] = set()  # lane locals assigned after their declaration
        self.counter = 0
        self._slots(lanes)

    # ---------------------------------------------------------------------------------------------- slots
    def _slots(self, lanes: list[list[tuple[Any, Any]]]) -> None:
        g = self.g
        field_lanes: dict[tuple[str, str], list[int]] = {}  # (header code, field) -> lanes using it, per slot
        for s, (tnode, _) in enumerate(lanes[0]):
            nodes = [lane[s][1] for lane in lanes]
            if isinstance(tnode, ast.Name):
                self.regs[id(tnode)] = self._reg_slot([self.typed.refs[n] for n in nodes], tnode)
                continue
            members = [n.member for n in nodes]
            base = g.x.expr(tnode.expr)
            if len(set(members)) == 1:
                self.shared_fields.add(id(tnode))
                field_lanes.setdefault((base, members[0]), []).append(-1)
                continue
            t = self.typed.types[tnode.expr]
            assert isinstance(t, HeaderT)
            if has_varbit(t):
                raise Reject("a header with a varbit field keeps its scalar layout")
            idx = [t.field_index[m] for m in members]  # was a list search per lane: quadratic in lanes
            if idx != list(range(idx[0], idx[0] + self.k)):
                raise Reject("the lanes' fields are not consecutive fields of the header in lane order")
            types = {self.typed.types[n] for n in nodes}
            if len(types) != 1:
                raise Reject("the lanes' fields differ in type")
            ft = _bits(next(iter(types)))
            run = field_run(t, idx[0])
            if ft is None or run is None or run[0] + run[1] < idx[-1] + 1:
                raise Reject("the lanes' fields are not one byte-aligned run of 8/16/32-bit fields")
            first = run[0]
            lo = idx[0] - first
            # the whole run: index nothing (a slice object per access costs as much as a small numpy op)
            ref = f"{base}._r{first}" if lo == 0 and self.k == run[1] else f"{base}._r{first}[{lo}:{lo + self.k}]"
            plain = not ref.endswith("]") and _member_path(tnode.expr)
            self.fields[id(tnode)] = _FieldSlot(ref, ft, plain)
            self.new_runs.append((t, set(idx)))
            for lane, m in enumerate(members):
                field_lanes.setdefault((base, m), []).append(lane)
        for (base, m), users in field_lanes.items():
            if len(set(users)) > 1:
                raise Reject(f"lanes depend on each other through {base}.{m}")

    def _reg_slot(self, regs: list[Var], node: ast.Node) -> _RegSlot:
        g = self.g
        if len(set(map(id, regs))) != len(regs):
            raise Reject("two lanes use the same register array")
        elems = {r.type.args[0] if isinstance(r.type, ExternT) and r.type.args else None for r in regs}
        sizes = {g.mod.instance_size(r) for r in regs}
        if len(elems) != 1 or len(sizes) != 1:
            raise Reject("the lanes' register arrays differ in element type or size")
        elem = next(iter(elems))
        bt = _bits(elem) if elem is not None else None
        if bt is None:
            raise Reject("register elements wider than 32 bits (or not bit<W>/int<W>) are not vectorised")
        names = tuple(qualify(g.mod.owner_block(g.block, r.node).prefix, r.node) for r in regs)
        vectors = module_vectors(g.mod)
        placed = [vectors.stores.get(n) for n in names]
        pending = {n: (b, i) for b, ns in self.new_stores for i, n in enumerate(ns)}
        if all(p is None for p in placed) and not any(n in pending for n in names):
            binding = f"VS{len(vectors.stores) + len(self.new_stores)}_{self.gid}"
            self.new_stores.append((binding, names))
            return _RegSlot(binding, "", next(iter(sizes)), bt)
        cols: list[int] = []
        stores = set()
        widths = {b: len(ns) for b, ns in self.new_stores}
        for n, p in zip(names, placed, strict=True):
            if p is not None:
                stores.add(p[0].binding)
                widths[p[0].binding] = len(p[0].names)
                cols.append(p[1])
            elif n in pending:
                stores.add(pending[n][0])
                cols.append(pending[n][1])
            else:
                raise Reject("the lanes' register arrays are split between vector stores")
        if len(stores) != 1:
            raise Reject("the lanes' register arrays are split between vector stores")
        binding = next(iter(stores))
        if cols != list(range(cols[0], cols[0] + len(cols))):
            raise Reject("the lanes' register arrays are not consecutive columns of their vector store")
        full = cols[0] == 0 and len(cols) == widths[binding]
        return _RegSlot(binding, "" if full else f"{cols[0]}:{cols[0] + len(cols)}", next(iter(sizes)), bt)

    # ------------------------------------------------------------------------------------------- helpers
    def tmp(self, hint: str) -> str:
        self.counter += 1
        return f"_{hint}{self.gid}_{self.counter}"

    def w(self, line: str) -> None:
        self.g.w(line)

    def is_lane(self, e: ast.Node) -> bool:
        """Whether `e` depends on the lane (a lane local, a lane field, a lane register)."""
        if isinstance(e, ast.Name):
            ref = self.typed.refs.get(e)
            return ref in self.local or id(e) in self.regs
        if isinstance(e, ast.Member) and id(e) in self.fields:
            return True
        if isinstance(e, ast.Node):
            for f in dataclasses.fields(e):
                if f.name == "loc":
                    continue
                v = getattr(e, f.name)
                if isinstance(v, ast.Node) and self.is_lane(v):
                    return True
                if isinstance(v, tuple) and any(isinstance(x, ast.Node) and self.is_lane(x) for x in v):
                    return True
        return False

    def invariant(self, e: ast.Expression) -> _V:
        """A lane-invariant expression, in scalar code; only pure expressions (isValid is the one call)."""
        self._check_pure(e)
        mark = len(self.g.lines)
        code = self.g.x.expr(e)
        if len(self.g.lines) != mark:
            raise Reject("an invariant expression needs statements of its own")
        return _V(code, "inv", self.typed.types[e])

    def _check_pure(self, e: ast.Node) -> None:
        for node in _walk(e):
            if isinstance(node, ast.Call):
                info = self.typed.calls.get(node)
                if info is None or not (info.kind == "header_method" and info.name == "isValid"):
                    raise Reject("a call inside the run")
        self._collect_reads(e, top=True)

    def _collect_reads(self, e: Any, *, top: bool) -> None:
        """Record the locations an invariant expression reads: whole access paths (`p_m.keep`), not their bases."""
        if isinstance(e, (ast.Name, ast.Member)):
            if top and not isinstance(self.typed.types.get(e), ExternT):
                with contextlib.suppress(Exception):
                    self.reads.add(self.g.x.expr(e))
            if isinstance(e, ast.Member):
                self._collect_reads(e.expr, top=False)
            return
        if isinstance(e, ast.Index):
            self._collect_reads(e.expr, top=top)
            self._collect_reads(e.index, top=True)
            return
        if isinstance(e, ast.Node):
            for f in dataclasses.fields(e):
                if f.name != "loc":
                    self._collect_reads(getattr(e, f.name), top=True)
        elif isinstance(e, tuple):
            for x in e:
                self._collect_reads(x, top=True)

    def num(self, v: _V, t: P4Type) -> str:
        """An operand as the number numpy should see: invariant `int<W>` patterns are sign-extended."""
        b = _bits(t)
        if v.kind != "inv" or b is None or not b.signed:
            return v.code
        if v.code.isdigit():
            s = 1 << (b.width - 1)
            return str((int(v.code) ^ s) - s)
        return f"_vx.sx({v.code}, {b.width})"

    def scalar(self, code: str, t: P4Type) -> str:
        """An invariant operand of a lane operation as a 0-d array of the lanes' dtype: numpy resolves a Python int
        beside an array on a slower path (about 0.7 us more per operation here). A literal is one constant array
        made in `build(rt)`; any other value is stored into its own 0-d array right before the statement that uses
        it (same dtype as the lanes, so the result type is the one the Python int gave)."""
        name = self.tmp("k")
        dtype = _dtype(t)
        if _LITERAL.fullmatch(code):
            self.scalars.append(f"{name} = _vx.full((), {code}, {dtype})")
        else:
            self.scalars.append(f"{name} = _vx.zeros((), {dtype})")
            self.w(f"{name}[()] = {code}")
        return name

    def lanevec(self, v: _V) -> str:
        """A value to keep in a lane local: a fresh array of the lane count."""
        if v.kind == "inv":
            return f"_vx.full({self.k}, {self.num(v, v.t)}, {_dtype(v.t)})"
        if v.kind == "view":
            return f"{v.code}.copy()"
        return v.code

    def operand(self, *codes: str) -> None:
        """The emitter put these values as operands of an operator whose result is a fresh array: for a register
        row local, a use that cannot see whether its row was copied (`elide_row_copies`)."""
        for code in codes:
            row = self.row_reads.get(code)
            if row is not None:
                row.operands += 1
            self.copied(code)

    def fresh_view(self, value: str) -> str | None:
        """The `_Fresh` local `value` is a whole-container view of (`x.view(_vx.uW)`), when every use of it but this
        one copied it; else None."""
        m = _VIEW.fullmatch(value)
        if m is None:
            return None
        fresh = self.fresh.get(m.group(1))
        if fresh is None or self.local_uses.get(m.group(1), 0) - fresh.base != fresh.copied + 1:
            return None
        return m.group(1)

    def copied(self, code: str) -> None:
        """A use of a `_Fresh` local that copies its array (an operand, a register write, a field store)."""
        fresh = self.fresh.get(code)
        if fresh is not None:
            fresh.copied += 1

    def to_pattern(self, v: _V, b: BitsT) -> str:
        """A value as the unsigned patterns a field run or register store holds (invariants already are). Unmasked,
        a reinterpreting cast's source goes in as it is (`_V.raw`): the assignment converts it bit for bit."""
        if v.kind == "inv":
            return v.code
        if not b.signed and b.width == _container(b):
            return v.raw if v.raw is not None and self.mask is None else v.code
        return f"_vx.pattern({v.code}, {b.width})"

    # ------------------------------------------------------------------------------------------- expressions
    def expr(self, e: ast.Expression) -> _V:
        if not self.is_lane(e):
            return self.invariant(e)
        t = self.typed.types[e]
        if isinstance(e, ast.Name):
            ref = self.typed.refs.get(e)
            if isinstance(ref, Var) and ref in self.local:
                name = self.local[ref][0]
                self.local_uses[name] = self.local_uses.get(name, 0) + 1
                row = self.row_reads.get(name)
                if row is not None:
                    row.uses += 1
                    row.escapes |= row.store in self.written
                return _V(name, "vec", t)
            raise Reject("a register used as a value")
        if isinstance(e, ast.Member):
            fs = self.fields[id(e)]
            code = fs.ref
            if fs.t.signed:
                code = f"_vx.value({code}, {fs.t.width}, True)"
            return _V(code, "view", t)
        if isinstance(e, ast.Call):
            return self.read_call(e)
        if isinstance(e, ast.BinaryOp):
            return self.binary(e, t)
        if isinstance(e, ast.UnaryOp):
            a = self.expr(e.operand)
            if e.op == "!":
                return _V(f"(~{a.code})", "vec", t)
            b = _bits(t)
            if b is None:
                raise Reject(f"unary {e.op} on {t}")
            if e.op == "~":
                if b.signed or b.width == _container(b):
                    return _V(f"(~{a.code})", "vec", t)
                self.operand(a.code)
                return _V(f"({a.code} ^ {hex((1 << b.width) - 1)})", "vec", t)
            if e.op == "-":
                return self.normed(f"(-{a.code})", b, t)
            return a
        if isinstance(e, ast.Cast):
            return self.cast(e, t)
        if isinstance(e, ast.Slice):
            a = self.expr(e.expr)
            src = _bits(self.typed.types[e.expr])
            if src is None:
                raise Reject("slice of a non-bit value")
            hi = int(self.typed.consts[e.hi])
            lo = int(self.typed.consts[e.lo])
            b = _bits(t)
            assert b is not None
            pat = f"_vx.pattern({a.code}, {src.width})" if src.signed else a.code
            code = f"(({pat} >> {lo}) & {hex((1 << (hi - lo + 1)) - 1)})"
            if _container(b) != _container(src):
                code = f"{code}.astype({_dtype(b)})"
            return _V(code, "vec", t)
        if isinstance(e, ast.Ternary):
            c = self.expr(e.cond)
            x = self.expr(e.then)
            y = self.expr(e.else_)
            return _V(f"_vx.where({c.code}, {self.num(x, t)}, {self.num(y, t)}).astype({_dtype(t)})", "vec", t)
        raise Reject(f"{type(e).__name__} per lane")

    def normed(self, code: str, b: BitsT, t: P4Type) -> _V:
        if b.width == _container(b):
            return _V(code, "vec", t)
        return _V(f"_vx.norm({code}, {b.width}, {b.signed})", "vec", t)

    def binary(self, e: ast.BinaryOp, t: P4Type) -> _V:
        op = e.op
        lt = self.typed.types[e.left]
        if op in ("<<", ">>"):
            if self.is_lane(e.right):
                raise Reject("a shift by a per-lane amount")
            a = self.expr(e.left)
            k = self.invariant(e.right).code
            b = _bits(t)
            assert b is not None
            fn = "shl" if op == "<<" else "shr"
            return _V(f"_vx.{fn}({a.code}, {k}, {b.width}, {b.signed})", "vec", t)
        a = self.expr(e.left)
        c = self.expr(e.right)
        if op in ("&&", "||"):
            self.operand(a.code, c.code)
            return _V(f"({a.code} {'&' if op == '&&' else '|'} {c.code})", "vec", t)
        if isinstance(underlying(lt), BoolT) and op in ("==", "!="):
            self.operand(a.code, c.code)
            return _V(f"({a.code} {op} {c.code})", "vec", t)
        if _bits(lt) is None:
            raise Reject(f"operator {op} on {lt}")
        x, y = self.num(a, lt), self.num(c, lt)
        if op in _SCALAR_OPS and (a.kind == "inv") != (c.kind == "inv"):
            if a.kind == "inv":
                x = self.scalar(x, lt)
            else:
                y = self.scalar(y, lt)
        if op in ("==", "!=", "<", ">", "<=", ">="):
            self.operand(x, y)
            return _V(f"({x} {op} {y})", "vec", t)
        b = _bits(t)
        if b is None:
            raise Reject(f"operator {op} giving {t}")
        if op in ("&", "|", "^"):
            self.operand(x, y)
            return _V(f"({x} {op} {y})", "vec", t)
        if op in ("+", "-", "*"):
            self.operand(x, y)
            return self.normed(f"({x} {op} {y})", b, t)
        if op in ("|+|", "|-|"):
            fn = "sat_add" if op == "|+|" else "sat_sub"
            return _V(f"_vx.{fn}({x}, {y}, {b.width}, {b.signed}, {_dtype(t)})", "vec", t)
        raise Reject(f"operator {op} per lane")

    def cast(self, e: ast.Cast, t: P4Type) -> _V:
        """The target's W2-bit pattern is the source number mod 2^W2 (sign-extension of int<W> when widening comes
        for free): convert the container (numpy wraps modulo), then mask or sign-extend when W2 is narrower than
        its container and the value may be out of the target's range."""
        st = self.typed.types[e.expr]
        a = self.expr(e.expr)
        ut, us = underlying(t), underlying(st)
        if isinstance(ut, BoolT):
            if isinstance(us, BoolT):
                return a
            self.operand(a.code)
            return _V(f"({a.code} != 0)", "vec", t)
        dst = _bits(t)
        if dst is None:
            raise Reject(f"cast to {t}")
        if isinstance(us, BoolT):
            return _V(f"{a.code}.astype({_dtype(t)})", "vec", t)
        src = _bits(st)
        if src is None:
            raise Reject(f"cast from {st}")
        if src == dst:
            return a
        cs, cd = _container(src), _container(dst)
        if cs == cd:
            code, kind = f"{a.code}.view({_dtype(t)})", a.kind
        else:
            code, kind = f"{a.code}.astype({_dtype(t)})", "vec"
        in_range = dst.width > src.width and (dst.signed or not src.signed)
        if not in_range and dst.width < cd:
            return _V(f"_vx.norm({code}, {dst.width}, {dst.signed})", "vec", t)
        raw = a.code if cs == cd and a.kind != "inv" else None
        return _V(code, kind if a.kind != "inv" else "vec", t, raw)

    def read_call(self, e: ast.Call) -> _V:
        info = self.typed.calls.get(e)
        if info is None or info.kind != "extern_method" or info.name != "read" or len(info.params) != 1:
            raise Reject("a call inside the run")
        assert info.receiver is not None
        rs = self.regs[id(info.receiver)]
        idx = self.index(info.args[0].value if info.args[0] is not None else None)
        zero = f"_vx.zeros({self.k}, {_dtype(rs.t)})"
        code = f"({self.reg_value(rs, idx)} if {idx} < {rs.size} else {zero})"
        return _V(code, "view", self.typed.types[e])

    def reg_value(self, rs: _RegSlot, idx: str) -> str:
        code = rs.at(idx)
        if rs.t.signed:
            code = f"_vx.value({code}, {rs.t.width}, True)"
        return code

    def index(self, e: ast.Expression | None) -> str:
        if e is None or self.is_lane(e):
            raise Reject("a register index that differs between lanes")
        code = self.invariant(e).code
        if code.replace("_", "").replace(".", "").isalnum():
            return code
        name = self.tmp("i")
        self.w(f"{name} = {code}")
        return name

    # -------------------------------------------------------------------------------------------- statements
    def stmt(self, st: ast.Statement) -> None:
        if isinstance(st, ast.BlockStatement):
            body = st.statements
            i = 0
            while i < len(body):
                if i + 1 < len(body) and (self.declare_and_read(body[i], body[i + 1])
                                          or self.saturation_flag(body[i], body[i + 1])):
                    i += 2
                    continue
                self.stmt(body[i])
                i += 1
        elif isinstance(st, ast.EmptyStatement):
            pass
        elif isinstance(st, ast.VariableDeclaration):
            var = self.typed.decl_vars[st]
            name = self.tmp("l")
            dtype = _dtype(var.type)
            self.local[var] = (name, var.type)
            if st.init is None:
                self.w(f"{name} = _vx.zeros({self.k}, {dtype})")
            else:
                self.w(f"{name} = {self.lanevec(self.expr(st.init))}")
        elif isinstance(st, ast.AssignmentStatement):
            self.assign(st.left, st.right)
        elif isinstance(st, ast.IfStatement):
            self.if_stmt(st)
        elif isinstance(st, ast.MethodCallStatement):
            self.call(st.call)
        else:
            raise Reject(f"{type(st).__name__} inside the run")

    def declare_and_read(self, decl: ast.Statement, read: ast.Statement) -> bool:
        """`bit<32> t; r.read(t, i);` (every unrolled read-modify-write starts so) as one expression: the store's
        cells copied, or zeros when the index is out of range, instead of zeros then an overwrite."""
        if not (isinstance(decl, ast.VariableDeclaration) and decl.init is None and self.mask is None
                and isinstance(read, ast.MethodCallStatement)):
            return False
        info = self.typed.calls.get(read.call)
        if (info is None or info.kind != "extern_method" or info.name != "read" or len(info.args) != 2
                or info.receiver is None or id(info.receiver) not in self.regs):
            return False
        dst = info.args[0].value if info.args[0] is not None else None
        var = self.typed.decl_vars.get(decl)
        if not isinstance(dst, ast.Name) or not isinstance(var, Var) or id(self.typed.refs.get(dst)) != id(var):
            return False
        rs = self.regs[id(info.receiver)]
        if _bits(var.type) != rs.t:
            return False
        dtype = _dtype(var.type)
        idx = self.index(info.args[1].value if info.args[1] is not None else None)
        name = self.tmp("l")
        self.local[var] = (name, var.type)
        row, zero = self.reg_value(rs, idx), f"if {idx} < {rs.size} else _vx.zeros({self.k}, {dtype})"
        self.row_reads[name] = _RowRead(len(self.g.lines), rs.store, "    " * self.g.level + f"{name} = {row} {zero}")
        self.w(f"{name} = {row}.copy() {zero}")
        return True

    def plain_lane(self, e: ast.Expression, b: BitsT) -> str | None:
        """The code of `e` when it is a lane local or a whole field run of type `b` reached through members only
        (what `saturation_flag` fuses), without emitting anything; else None."""
        if _bits(self.typed.types[e]) != b:
            return None
        if isinstance(e, ast.Name):
            ref = self.typed.refs.get(e)
            return self.local[ref][0] if isinstance(ref, Var) and ref in self.local else None
        fs = self.fields.get(id(e)) if isinstance(e, ast.Member) else None
        return fs.ref if fs is not None and fs.plain else None

    def saturation_flag(self, first: ast.Statement, test: ast.Statement) -> bool:
        """The aggregation idiom `int<W> sat = (int<W>)a |+| (int<W>)b; if ((bit<W>)sat != a + b) { flag = 1; }`
        (W = 8, 16, 32, so nothing to renormalise; a and b lane locals or whole field runs; no mask) as one
        `vecops.sat_add_ovf` call: the sum and, per lane, whether it saturated, which is what the test compares
        (the wrapping sum mod 2^W equals the clamped one exactly when nothing was clamped). One add, view and
        compare fewer. False: not that shape (the statements are emitted one by one)."""
        if self.mask is not None or not isinstance(test, ast.IfStatement):
            return False
        if isinstance(first, ast.VariableDeclaration) and first.init is not None:
            var, right = self.typed.decl_vars.get(first), first.init
        elif isinstance(first, ast.AssignmentStatement) and isinstance(first.left, ast.Name):
            var, right = self.typed.refs.get(first.left), first.right
            if var not in self.local:
                return False
        else:
            return False
        if not isinstance(var, Var) or not (isinstance(right, ast.BinaryOp) and right.op == "|+|"):
            return False
        sat: Var = var
        b = _bits(self.typed.types[right])
        if b is None or not b.signed or b.width not in (8, 16, 32):
            return False
        u = BitsT(b.width, False)
        sources = []
        for operand in (right.left, right.right):
            if not (isinstance(operand, ast.Cast) and _bits(self.typed.types[operand]) == b):
                return False
            sources.append(self.plain_lane(operand.expr, u))
        cond = test.cond
        if not (isinstance(cond, ast.BinaryOp) and cond.op == "!=" and isinstance(cond.left, ast.Cast)
                and _bits(self.typed.types[cond.left]) == u and isinstance(cond.left.expr, ast.Name)
                and self.typed.refs.get(cond.left.expr) is sat
                and isinstance(cond.right, ast.BinaryOp) and cond.right.op == "+"
                and _bits(self.typed.types[cond.right]) == u):
            return False
        terms = [self.plain_lane(cond.right.left, u), self.plain_lane(cond.right.right, u)]
        if None in sources or None in terms or terms[0] == terms[1] or set(terms) != set(sources):
            return False
        # emitted as the two statements would be, in the same order (names, uses of row locals), one line fewer
        if isinstance(first, ast.VariableDeclaration):
            self.local[sat] = (self.tmp("l"), sat.type)
        x = self.local[sat][0]
        if x in self.row_reads:
            self.row_reads[x].escapes = True  # rebound
        a, c = self.expr(right.left), self.expr(right.right)
        cv = self.expr(cond)
        mask = self.tmp("m")
        w = b.width
        if a.raw is not None and c.raw is not None:
            # both operands are reinterpreting casts of bit<W> lanes in their own container: the unsigned patterns
            # go in as they are (no signed views, no operand checks at run time)
            self.w(f"{x}, {mask} = _vx.sat_add_ovf_u({a.raw}, {c.raw}, {w})")
        else:
            self.w(f"{x}, {mask} = _vx.sat_add_ovf({a.code}, {c.code}, {w}, True, _vx.i{w})")
        self.fresh[x] = _Fresh(self.local_uses.get(x, 0))  # both calls return a new array, referenced by x alone
        self.masked_branches(test, cv, mask)
        return True

    def elide_row_copies(self) -> None:
        """Drop the `.copy()` of a register row read into a local when the copy cannot be observed: every use of the
        local the emitter wrote was an operand of an operator that makes a fresh array (`(t & k)`, `(b + t)`, ...),
        none after a write to that store began, and the local was never rebound, passed on or aliased (`.view`).
        Otherwise the copy stays: one numpy call per run and packet is all this saves."""
        lines = self.g.lines
        for row in self.row_reads.values():
            if not row.escapes and row.uses == row.operands:
                lines[row.at] = row.uncopied

    def rebind_run_stores(self) -> None:
        """A whole field run stored from a `_Fresh` local takes the local's array (a view as the run's unsigned
        dtype) instead of a copy, when every use of the local before the store copied it and the emitter wrote no
        use after it: no other name then references that array, so later in-place stores into the run (vector
        code, `RunField`, `assign`) cannot show anywhere else. A field run is the header's own array and may be
        rebound (the parser does so: `vecops.decode`). One 1024-lane copy fewer per packet for aggregation."""
        lines = self.g.lines
        for st in self.run_stores:
            if self.local_uses.get(st.name, 0) == st.uses and (
                    st.alias is None or self.local_uses.get(st.alias[0], 0) == st.alias[1]):
                lines[st.at] = st.rebind

    def store_lane(self, left: ast.Expression, v: _V) -> None:
        """Write a value into a lane location (a lane local or a lane field), under the current mask."""
        if isinstance(left, ast.Name):
            var = self.typed.refs.get(left)
            assert isinstance(var, Var)
            name, t = self.local[var]
            value = self.lanevec(v) if self.mask is None else f"_vx.where({self.mask}, {self.num(v, t)}, {name})"
            row = self.row_reads.get(name)
            # the row read's copy, every use of it so far an operand of a fresh-array operator: no other name holds
            # that array (checked before `escapes` is set, which keeps the copy)
            private_row = (row is not None and not row.escapes and row.uses == row.operands
                           and name not in self.rebound)
            if row is not None:
                row.escapes = True  # rebound: the row read stays a copy
            self.fresh.pop(name, None)  # its new array may be shared (`lanevec` hands out views and locals)
            src = self.fresh_view(value) if private_row else None
            if src is not None:
                # ACCUMULATE's `t = (bit<W>)sat` after `r.read(t, i)`: t holds the row's copy or sat's array, which
                # nothing else holds; a field run may take it if neither local is used after the store
                self.fresh[name] = _Fresh(self.local_uses.get(name, 0), alias=(src, self.local_uses[src]))
            self.rebound.add(name)
            self.w(f"{name} = {value}")
            return
        assert isinstance(left, ast.Member)
        fs = self.fields[id(left)]
        value = self.to_pattern(v, fs.t)
        if self.mask is not None:
            value = f"_vx.where({self.mask}, {value}, {fs.ref})"
        else:
            self.copied(value)
            fresh = self.fresh.get(value)
            if (fresh is not None and fs.plain and not fs.t.signed and fs.t.width == _container(fs.t)
                    and self.local_uses.get(value, 0) - fresh.base == fresh.copied):
                c = _container(fs.t)
                self.run_stores.append(_RunStore(len(self.g.lines), value, self.local_uses[value],
                                                 "    " * self.g.level + f"{fs.ref} = {value}.view(_vx.u{c})",
                                                 fresh.alias))
        self.w(f"{fs.ref}[:] = {value}" if not fs.ref.endswith("]") else f"{fs.ref} = {value}")

    def assign(self, left: ast.Expression, right: ast.Expression) -> None:
        if isinstance(left, ast.Name) and self.typed.refs.get(left) in self.local:
            self.store_lane(left, self.expr(right))
            return
        if isinstance(left, ast.Member) and id(left) in self.fields:
            self.store_lane(left, self.expr(right))
            return
        if self.is_lane(left) or not isinstance(left, (ast.Name, ast.Member)):
            raise Reject("an assignment to a location the lanes share")
        if id(left) in self.shared_fields or (isinstance(left, ast.Member) and self._header_field(left)):
            raise Reject("an assignment to a header field the lanes share")
        target = self.g.x.expr(left)
        self.writes[target] = self.writes.get(target, 0) + 1
        t = self.typed.types[left]
        if not self.is_lane(right):
            # a flag: every lane (under the mask) writes the same invariant value
            value = self.invariant(right).code
            if self.mask is None:
                self.g.store(left, value)
            else:
                self.w(f"if _vx.count_nonzero({self.mask}):")
                self.g.level += 1
                self.g.store(left, value)
                self.g.level -= 1
            return
        # an accumulator: x = x op e (or e op x) with op + | ^
        if not (isinstance(right, ast.BinaryOp) and right.op in ("+", "|", "^")):
            raise Reject("a per-lane value assigned to a location the lanes share")
        b = _bits(t)
        if b is None:
            raise Reject("an accumulator that is not bit<W>/int<W>")
        if not self.is_lane(right.left) and self._code(right.left) == target:
            other = right.right
        elif not self.is_lane(right.right) and self._code(right.right) == target:
            other = right.left
        else:
            raise Reject("a per-lane value assigned to a location the lanes share")
        v = self.expr(other)
        fn = {"+": "rsum", "|": "ror", "^": "rxor"}[right.op]
        masked = f", {self.mask}" if self.mask is not None else ""
        self.g.store(left, f"(({target} {right.op} _vx.{fn}({v.code}{masked})) & {hex((1 << b.width) - 1)})")

    def _header_field(self, e: ast.Member) -> bool:
        return isinstance(self.typed.types.get(e.expr), HeaderT)

    def _code(self, e: ast.Expression) -> str | None:
        try:
            mark = len(self.g.lines)
            code = self.g.x.expr(e)
            del self.g.lines[mark:]
            return code
        except Exception:
            return None

    def if_stmt(self, st: ast.IfStatement) -> None:
        c = self.typed.consts.get(st.cond)
        if isinstance(c, bool):
            chosen = st.then if c else st.else_
            if chosen is not None:
                self.stmt(chosen)
            return
        if not self.is_lane(st.cond):
            cond = self.invariant(st.cond).code
            self.w(f"if {cond}:")
            self._branch(st.then)
            if st.else_ is not None:
                self.w("else:")
                self._branch(st.else_)
            return
        cv = self.expr(st.cond)
        outer = self.mask
        m_then = self.tmp("m")
        self.w(f"{m_then} = {cv.code}" if outer is None else f"{m_then} = {outer} & {cv.code}")
        self.masked_branches(st, cv, m_then)

    def masked_branches(self, st: ast.IfStatement, cv: _V, m_then: str) -> None:
        """An `if` on a lane condition `cv` whose mask `m_then` is set: both branches under their masks."""
        outer = self.mask
        m_else = None
        if st.else_ is not None:
            m_else = self.tmp("m")
            self.w(f"{m_else} = ~{cv.code}" if outer is None else f"{m_else} = {outer} & ~{cv.code}")
        self.mask = m_then
        self.stmt(st.then)
        if st.else_ is not None:
            self.mask = m_else
            self.stmt(st.else_)
        self.mask = outer

    def _branch(self, st: ast.Statement) -> None:
        self.g.level += 1
        mark = len(self.g.lines)
        self.stmt(st)
        if len(self.g.lines) == mark:
            self.w("pass")
        self.g.level -= 1

    def call(self, call: ast.Call) -> None:
        info = self.typed.calls.get(call)
        if info is None or info.kind != "extern_method" or info.receiver is None or id(info.receiver) not in self.regs:
            raise Reject("a call inside the run")
        rs = self.regs[id(info.receiver)]
        args = [a.value if a is not None else None for a in info.args]
        if info.name == "read" and len(args) == 2:
            dst, index = args
            assert dst is not None
            idx = self.index(index)
            self.w(f"if {idx} < {rs.size}:")
            self.g.level += 1
            if not ((isinstance(dst, ast.Name) and self.typed.refs.get(dst) in self.local)
                    or (isinstance(dst, ast.Member) and id(dst) in self.fields)):
                raise Reject("a register read into a location the lanes share")
            self.store_lane(dst, _V(self.reg_value(rs, idx), "view", rs.t))
            self.g.level -= 1
            return
        if info.name == "write" and len(args) == 2:
            index, value = args
            assert value is not None
            idx = self.index(index)
            self.written.add(rs.store)  # from here on (this statement's value included) a row local may see it
            v = self.expr(value)
            target = rs.at(idx)
            code = self.to_pattern(v, rs.t)
            if self.mask is not None:
                code = f"_vx.where({self.mask}, {code}, {target})"
            else:
                self.copied(code)  # the store's cells take a copy
            self.w(f"if {idx} < {rs.size}:")
            self.w(f"    {target} = {code}")
            return
        raise Reject(f"register.{info.name} inside the run")

    # -------------------------------------------------------------------------------------------- checks
    def check(self) -> None:
        for target, n in self.writes.items():
            if n > 1:
                raise Reject(f"{target} is written by more than one statement of the lane")
            for r in self.reads:
                if r == target or r.startswith(target + ".") or target.startswith(r + "."):
                    raise Reject(f"{target} is written by one lane and read by the others")


def emit_vector_run(g: BlockGen, stmts: tuple[ast.Statement, ...], i: int) -> int:
    """Emit statements `stmts[i:]` that form a run of lanes as vector code; returns how many statements were
    consumed (0: not a run, the caller emits `stmts[i]` as scalar code). A run that cannot be vectorised is emitted
    here as scalar code, so its lanes are not matched again one by one."""
    if not _enabled[-1]:
        return 0
    k, lanes = run_length(g, stmts, i)
    if k < MIN_LANES:
        return 1 if emit_reduction(g, stmts[i]) else 0
    vectors = module_vectors(g.mod)
    mark, level, bindings = len(g.lines), g.level, len(g.mod.bindings)
    try:
        vectors.groups += 1
        em = _Emitter(g, lanes, vectors.groups)
        em.stmt(stmts[i])
        em.check()
        em.elide_row_copies()
        em.rebind_run_stores()
    except Reject as exc:
        del g.lines[mark:]
        del g.mod.bindings[bindings:]
        g.level = level
        _record(vectors, k, str(exc))
        for st in stmts[i:i + k]:
            g.stmt(st)
        return k
    commit(g.mod, em)
    _record(vectors, k, "vectorised")
    return k


def _terms(e: ast.Expression, op: str) -> list[ast.Expression]:
    if isinstance(e, ast.BinaryOp) and e.op == op:
        return _terms(e.left, op) + _terms(e.right, op)
    return [e]


def emit_reduction(g: BlockGen, st: ast.Statement) -> bool:
    """`x = f(h.v0) + f(h.v1) + ... + c` (also `^`, `|`): one expression summing a field run (p4src's checksum
    blocks are written so, p4c's JSON grows too fast with a running sum) -> a numpy reduction of f over the run.
    The sum is exact, then kept mod 2^W as the chain of `+` would. False: not that shape (scalar code)."""
    if not (isinstance(st, ast.AssignmentStatement) and isinstance(st.right, ast.BinaryOp)
            and st.right.op in ("+", "^", "|")):
        return False
    op = st.right.op
    t = _bits(g.typed.types.get(st.right) or BoolT())
    terms = _terms(st.right, op)
    if t is None or len(terms) < MIN_LANES:
        return False
    m = _Matcher(g)
    own: list[tuple[Any, Any]] = []
    m.same(terms[0], terms[0], own, {})
    # each term reads header fields only (a field may occur more than once: p4src's magnitude term `v ^ (v >> 31)`)
    if not own or not all(isinstance(node, ast.Member) for node, _ in own):
        return False
    lanes = [own]
    rest: list[ast.Expression] = []
    for term in terms[1:]:
        slots: list[tuple[Any, Any]] = []
        if len(rest) == 0 and m.same(terms[0], term, slots, {}) and len(slots) == len(own):
            lanes.append(slots)
        else:
            rest.append(term)
    if len(lanes) < MIN_LANES:
        return False
    vectors = module_vectors(g.mod)
    mark, level = len(g.lines), g.level
    try:
        vectors.groups += 1
        em = _Emitter(g, lanes, vectors.groups)
        v = em.expr(terms[0])
        extra = [em.invariant(r).code for r in rest]
        if v.kind == "inv":
            raise Reject("the terms do not depend on the fields")
    except Reject as exc:
        del g.lines[mark:]
        g.level = level
        _record(vectors, len(lanes), str(exc))
        return False
    fn = {"+": "rsum", "|": "ror", "^": "rxor"}[op]
    total = " ".join([f"_vx.{fn}({v.code})", *(f"{op} {x}" for x in extra)])
    g.store(st.left, f"(({total}) & {hex((1 << t.width) - 1)})")
    commit(g.mod, em)
    _record(vectors, len(lanes), "vectorised")
    return True


def commit(mod: ModuleGen, em: _Emitter) -> None:
    """Make the run's stores and header runs part of the module: stores are bound first in `build(rt)` (before any
    scalar binding of their registers' cells), header runs change their type's class (layout hook)."""
    vectors = module_vectors(mod)
    for binding, names in em.new_stores:
        store = _Store(binding, names)
        for col, n in enumerate(names):
            vectors.stores[n] = (store, col)
        mod.bindings.insert(0, f"{binding} = S.register_store({names!r})")
    mod.bindings.extend(em.scalars)
    for t, idx in em.new_runs:
        name = class_name(t)
        entry = vectors.runs.setdefault(name, (t, set()))
        entry[1].update(idx)
        mod.layout.custom[name] = functools.partial(header_source, name, t, entry[1])
    mod.layout.prelude = ["import p4switch.runtime.vecops as _vx", ""]


__all__ = ["MIN_LANES", "Reject", "disabled", "emit_vector_run", "field_run", "header_source", "module_vectors",
           "recording"]
