"""Python classes for P4 data: headers, structs, header unions and stacks, plus precompiled extract/emit code.

Every header or struct type becomes a slotted class (`__slots__` keeps attribute access fast and memory small).
Fields hold unsigned integers of their width (int<W> too: two's complement bit patterns), bools or nested
objects; headers carry their validity in `_v`. Extraction and emission are generated per header type as straight
code: one `struct.unpack_from`/`pack` when every field is a byte-aligned 8/16/32/64-bit word, otherwise one
`int.from_bytes`/`to_bytes` of the whole header with precomputed shifts and masks.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable

from p4switch.codegen.names import py_ident
from p4switch.frontend.types import (
    BitsT,
    BoolT,
    EnumT,
    ErrorT,
    HeaderT,
    HeaderUnionT,
    NewTypeT,
    P4Type,
    StackT,
    StructLikeT,
    StructT,
    TupleT,
    VarbitT,
    underlying,
    width_of,
)

_STRUCT_CODES = {8: "B", 16: "H", 32: "I", 64: "Q"}


def _struct_chunks(fields: list[tuple[str, int, bool]]) -> list[list[tuple[str, int, bool]]] | None:
    """The header's fields cut, in wire order, into consecutive groups of 8, 16, 32 or 64 bits (a group closes
    as soon as it reaches one of those widths), or None when they do not cut so (Ethernet's 48-bit addresses)."""
    chunks: list[list[tuple[str, int, bool]]] = []
    current: list[tuple[str, int, bool]] = []
    width = 0
    for field in fields:
        current.append(field)
        width += field[1]
        if width in _STRUCT_CODES:
            chunks.append(current)
            current, width = [], 0
        elif width > 64:
            return None
    return chunks if not current else None


class LayoutError(Exception):
    """A type this target cannot lay out (the compiler reports it as a diagnostic)."""


def pyname(name: str) -> str:
    """A P4 identifier as a Python attribute name (keywords and leading underscores get a suffix/prefix)."""
    if keyword.iskeyword(name) or name in ("copy", "assign", "mk"):
        return py_ident(name + "_")
    if name.startswith("_"):
        return py_ident("u" + name)
    return py_ident(name)


def class_name(t: P4Type) -> str:
    if isinstance(t, StackT):
        return py_ident(f"K_{_ident(class_name(t.element))}_{t.size}")
    return py_ident("T_" + _ident(str(t)))


def _ident(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", text)


def default_value(t: P4Type) -> str:
    """Python source for a fresh (zeroed / invalid) value of type `t`."""
    if isinstance(t, (StructLikeT, StackT)):
        return f"{class_name(t)}()"
    if isinstance(t, BoolT):
        return "False"
    if isinstance(t, TupleT):
        return "(" + "".join(default_value(e) + ", " for e in t.elements) + ")"
    return "0"


def is_object(t: P4Type) -> bool:
    return isinstance(t, (StructLikeT, StackT))


class LayoutBuilder:
    """Collects every composite type reachable from the program and writes their classes and codecs."""

    def __init__(self) -> None:
        self.types: dict[str, P4Type] = {}
        self.order: list[str] = []
        # the vectoriser (codegen/vector.py) replaces some header classes and needs its runtime module imported
        self.custom: dict[str, Callable[[], list[str]]] = {}
        self.prelude: list[str] = []

    def add(self, t: P4Type) -> None:
        if isinstance(t, NewTypeT):
            return
        if isinstance(t, (StackT, StructLikeT)) and class_name(t) in self.types:
            return  # added before, with everything it contains (a wide header is added once per use otherwise)
        if isinstance(t, StackT):
            self.add(t.element)
        elif isinstance(t, StructLikeT):
            for _, ft in t.fields:
                self.add(ft)
        elif isinstance(t, TupleT):
            for e in t.elements:
                self.add(e)
            return
        else:
            return
        name = class_name(t)
        if name not in self.types:
            self.types[name] = t
            self.order.append(name)

    def source(self) -> list[str]:
        lines: list[str] = list(self.prelude)
        for name in self.order:
            t = self.types[name]
            if name in self.custom:
                lines += self.custom[name]()
            elif isinstance(t, StackT):
                lines += self._stack_class(name, t)
            elif isinstance(t, HeaderT):
                lines += self._header_class(name, t)
                lines += self._extract_fn(name, t)
                lines += self._emit_fn(name, t)
            elif isinstance(t, HeaderUnionT):
                lines += self._struct_class(name, t, union=True)
            elif isinstance(t, StructLikeT):
                lines += self._struct_class(name, t)
        return lines

    # ------------------------------------------------------------------------------------------------- classes
    def _header_class(self, name: str, t: HeaderT) -> list[str]:
        for fname, ft in t.fields:
            if isinstance(ft, StructT) and not has_varbit(t) and _scalar_leaves(ft):
                continue  # a struct of bit/bool fields inside a header (P4_16 7.2.2): a nested object
            if not isinstance(underlying(ft), (BitsT, BoolT, VarbitT)):
                raise LayoutError(f"{t.name}.{fname}: header fields of type {ft} are not supported by this target")
        if sum(isinstance(ft, VarbitT) for _, ft in t.fields) > 1:
            raise LayoutError(f"{t.name}: a header may have at most one varbit field")
        if any(isinstance(ft, StructT) for _, ft in t.fields):
            return self._nested_header_class(name, t)
        fields = [pyname(f) for f, _ in t.fields]
        # a varbit field keeps its current length in bits next to its value
        state = fields + [f"_vl_{pf}" for (_f, ft), pf in zip(t.fields, fields, strict=False)
                          if isinstance(ft, VarbitT)]
        slots = ", ".join(repr(f) for f in ["_v", *state])
        out = [f"class {name}:", f"    __slots__ = ({slots},)", "", "    def __init__(self):",
               "        self._v = False"]
        out += [f"        self.{s} = 0" for s in state]
        out += ["", "    def copy(self):", f"        o = {name}.__new__({name})", "        o._v = self._v"]
        out += [f"        o.{s} = self.{s}" for s in state]
        out += ["        return o", "", "    def assign(self, s):", "        self._v = s._v"]
        out += [f"        self.{s} = s.{s}" for s in state]
        # BMv2's add_header: validating an invalid header resets its fields to zero; a valid one is left alone
        out += ["", "    def set_valid(self):", "        if not self._v:"]
        out += [f"            self.{s} = 0" for s in state]
        out += ["            self._v = True"]
        out += ["", "    def values(self):", "        return (" + "".join(f"self.{pf}, " for pf in fields) + ")"]
        out += ["", "    def set_values(self, vals):"]
        if fields:
            out.append("        (" + "".join(f"self.{pf}, " for pf in fields) + ") = vals")
        out.append("        self._v = True")
        out += ["", "    def __repr__(self):",
                f"        return '{t.name}(' + ('valid' if self._v else 'invalid') + "
                + "".join(f"', {f}=' + str(self.{pf}) + " for f, pf in zip([f for f, _ in t.fields], fields, strict=False))
                + "')'", "", ""]
        return out

    def _nested_header_class(self, name: str, t: HeaderT) -> list[str]:
        """A header with struct-typed fields: those are nested struct objects, and the header's values (what
        extract, emit, set_values and validation touch) are its scalar leaves in declaration order."""
        attrs = [(pyname(f), ft) for f, ft in t.fields]
        leaves = [path for path, _ in header_leaves(t)]
        slots = ", ".join(repr(a) for a in ["_v", *(a for a, _ in attrs)])
        out = [f"class {name}:", f"    __slots__ = ({slots},)", "", "    def __init__(self):",
               "        self._v = False"]
        out += [f"        self.{a} = {default_value(ft)}" for a, ft in attrs]
        out += ["", "    def copy(self):", f"        o = {name}.__new__({name})", "        o._v = self._v"]
        out += [f"        o.{a} = self.{a}.copy()" if is_object(ft) else f"        o.{a} = self.{a}" for a, ft in attrs]
        out += ["        return o", "", "    def assign(self, s):", "        self._v = s._v"]
        out += [f"        self.{a}.assign(s.{a})" if is_object(ft) else f"        self.{a} = s.{a}" for a, ft in attrs]
        out += ["", "    def set_valid(self):", "        if not self._v:"]
        out += [f"            self.{a} = {default_value(ft)}" for a, ft in attrs]
        out += ["            self._v = True"]
        out += ["", "    def values(self):", "        return (" + "".join(f"self.{p}, " for p in leaves) + ")"]
        out += ["", "    def set_values(self, vals):",
                "        (" + "".join(f"self.{p}, " for p in leaves) + ") = vals", "        self._v = True"]
        out += ["", "    def __repr__(self):",
                f"        return '{t.name}(' + ('valid' if self._v else 'invalid') + ', ' + repr(self.values()) + ')'",
                "", ""]
        return out

    def _struct_class(self, name: str, t: StructLikeT, *, union: bool = False) -> list[str]:
        fields = [pyname(f) for f, _ in t.fields]
        slots = ", ".join(repr(f) for f in fields)
        out = [f"class {name}:", f"    __slots__ = ({slots}{',' if fields else ''})", "", "    def __init__(self):"]
        if not fields:
            out.append("        pass")
        for (_f, ft), pf in zip(t.fields, fields, strict=False):
            out.append(f"        self.{pf} = {default_value(ft)}")
        out += ["", "    def copy(self):", f"        o = {name}.__new__({name})"]
        for (_f, ft), pf in zip(t.fields, fields, strict=False):
            out.append(f"        o.{pf} = self.{pf}.copy()" if is_object(ft) else f"        o.{pf} = self.{pf}")
        out += ["        return o", "", "    def assign(self, s):"]
        if not fields:
            out.append("        pass")
        for (_f, ft), pf in zip(t.fields, fields, strict=False):
            out.append(f"        self.{pf}.assign(s.{pf})" if is_object(ft) else f"        self.{pf} = s.{pf}")
        if union:
            out += ["", "    @property", "    def _v(self):",
                    "        return " + (" or ".join(f"self.{pf}._v" for pf in fields) or "False")]
        out += ["", "    def __repr__(self):",
                f"        return '{t.name}(' + "
                + " + ', ' + ".join(f"'{f}=' + repr(self.{pf})" for f, pf in zip([f for f, _ in t.fields], fields, strict=False))
                + (" + " if fields else "") + "')'", "", ""]
        return out

    def _stack_class(self, name: str, t: StackT) -> list[str]:
        elem = class_name(t.element)
        return [
            f"class {name}:",
            "    __slots__ = ('e', 'ni')",
            f"    size = {t.size}",
            "",
            "    def __init__(self):",
            f"        self.e = [{elem}() for _ in range({t.size})]",
            "        self.ni = 0",
            "",
            "    def copy(self):",
            f"        o = {name}.__new__({name})",
            "        o.e = [x.copy() for x in self.e]",
            "        o.ni = self.ni",
            "        return o",
            "",
            "    def assign(self, s):",
            "        for a, b in zip(self.e, s.e):",
            "            a.assign(b)",
            "        self.ni = s.ni",
            "",
            "    def push_front(self, n):",
            f"        for i in range({t.size} - 1, -1, -1):",
            "            if i >= n:",
            "                self.e[i].assign(self.e[i - n])",
            "            else:",
            "                self.e[i]._v = False",
            f"        self.ni = min(self.ni + n, {t.size})",
            "",
            "    def pop_front(self, n):",
            f"        for i in range({t.size}):",
            f"            if i + n < {t.size}:",
            "                self.e[i].assign(self.e[i + n])",
            "            else:",
            "                self.e[i]._v = False",
            "        self.ni = max(self.ni - n, 0)",
            "",
            "    def __repr__(self):",
            f"        return '{t}(' + repr(self.e) + ', next=' + str(self.ni) + ')'",
            "",
            "",
        ]

    # ------------------------------------------------------------------------------------------------- codecs
    def _extract_fn(self, name: str, t: HeaderT) -> list[str]:
        if has_varbit(t):
            return self._varbit_codecs(name, t)
        total = width_of(t) or 0
        if total % 8:
            raise LayoutError(f"{t.name}: header width {total} is not a multiple of 8 bits")
        nbytes = total // 8
        fields = [(path, width_of(ft) or 0, isinstance(underlying(ft), BoolT)) for path, ft in header_leaves(t)]
        out = [f"def x_{name}(o, d, p):"]
        if not fields:
            out += ["    o._v = True", "", ""]
            return out
        fmt = self._struct_format(fields)
        chunks = None if fmt is not None else _struct_chunks(fields)
        if fmt is not None:
            out.insert(0, f"_S_{name} = _struct.Struct({fmt!r})")
            targets = ", ".join(f"o.{f}" for f, _, _ in fields)
            out.append(f"    {targets}, = _S_{name}.unpack_from(d, p)")
        elif chunks is not None:
            # byte-aligned 8/16/32/64-bit groups of sub-byte fields (IPv4's version+ihl, flags+frag): one
            # `unpack_from`, then the groups split with shifts (cheaper than one big int shifted per field)
            fmt = ">" + "".join(_STRUCT_CODES[sum(w for _, w, _ in c)] for c in chunks)
            out.insert(0, f"_S_{name} = _struct.Struct({fmt!r})")
            names = [f"o.{c[0][0]}" if len(c) == 1 else f"_c{i}" for i, c in enumerate(chunks)]
            out.append(f"    {', '.join(names)}, = _S_{name}.unpack_from(d, p)")
            for i, c in enumerate(chunks):
                if len(c) == 1:
                    continue
                shift = sum(w for _, w, _ in c)
                for j, (f, w, is_bool) in enumerate(c):
                    shift -= w
                    expr = f"_c{i}" if shift == 0 else f"(_c{i} >> {shift})"
                    if j:
                        expr = f"({expr} & {hex((1 << w) - 1)})"
                    out.append(f"    o.{f} = {f'bool({expr})' if is_bool else expr}")
        else:
            out.append(f"    v = _ifb(d[p:p + {nbytes}], 'big')")
            shift = total
            for f, w, is_bool in fields:
                shift -= w
                expr = "v" if shift == 0 else f"(v >> {shift})"
                if shift + w < total:
                    expr = f"({expr} & {hex((1 << w) - 1)})"
                if is_bool:
                    expr = f"bool({expr})"
                out.append(f"    o.{f} = {expr}")
        out += ["    o._v = True", "", ""]
        return out

    def _emit_fn(self, name: str, t: HeaderT) -> list[str]:
        if has_varbit(t):
            return []  # written with the extractor
        total = width_of(t) or 0
        nbytes = total // 8
        fields = [(path, width_of(ft) or 0, isinstance(underlying(ft), BoolT)) for path, ft in header_leaves(t)]
        out = [f"def e_{name}(o):"]
        if not fields:
            return [*out, "    return b''", "", ""]
        fmt = self._struct_format(fields)
        chunks = None if fmt is not None else _struct_chunks(fields)
        if fmt is not None:
            out.append(f"    return _S_{name}.pack(" + ", ".join(f"o.{f}" for f, _, _ in fields) + ")")
        elif chunks is not None:
            values = []
            for c in chunks:
                shift = sum(w for _, w, _ in c)
                terms = []
                for f, w, is_bool in c:
                    shift -= w
                    val = f"int(o.{f})" if is_bool else f"o.{f}"
                    terms.append(val if shift == 0 else f"({val} << {shift})")
                values.append(terms[0] if len(terms) == 1 else f"({' | '.join(terms)})")
            out.append(f"    return _S_{name}.pack({', '.join(values)})")
        else:
            parts = []
            shift = total
            for f, w, is_bool in fields:
                shift -= w
                val = f"int(o.{f})" if is_bool else f"o.{f}"
                parts.append(val if shift == 0 else f"({val} << {shift})")
            out.append(f"    return ({' | '.join(parts)}).to_bytes({nbytes}, 'big')")
        return [*out, "", ""]

    def _varbit_codecs(self, name: str, t: HeaderT) -> list[str]:
        """Extract/emit for a header with a varbit field: its width is the field's current length `vb`."""
        fixed = sum(width_of(ft) or 0 for _, ft in t.fields if not isinstance(ft, VarbitT))
        ext = [f"def x_{name}(o, d, p, vb):", f"    s = {fixed} + vb", "    v = _ifb(d[p:p + (s >> 3)], 'big')"]
        emit = [f"def e_{name}(o):", "    acc = 0"]
        for f, ft in t.fields:
            pf = pyname(f)
            if isinstance(ft, VarbitT):
                ext += ["    s -= vb", f"    o.{pf} = (v >> s) & ((1 << vb) - 1)", f"    o._vl_{pf} = vb"]
                emit += [f"    acc = (acc << o._vl_{pf}) | o.{pf}"]
                length = f"o._vl_{pf}"
            else:
                w = width_of(ft) or 0
                value = f"(v >> s) & {hex((1 << w) - 1)}"
                ext += [f"    s -= {w}", f"    o.{pf} = " + (f"bool({value})" if isinstance(ft, BoolT) else value)]
                emit += [f"    acc = (acc << {w}) | {'int(o.' + pf + ')' if isinstance(ft, BoolT) else 'o.' + pf}"]
        ext += ["    o._v = True", "", ""]
        emit += [f"    return acc.to_bytes(({fixed} + {length}) >> 3, 'big')", "", ""]
        return ext + emit

    @staticmethod
    def _struct_format(fields: list[tuple[str, int, bool]]) -> str | None:
        if any(w not in _STRUCT_CODES or is_bool for _, w, is_bool in fields):
            return None
        return ">" + "".join(_STRUCT_CODES[w] for _, w, _ in fields)


def header_leaves(t: HeaderT) -> list[tuple[str, P4Type]]:
    """A header's scalar fields as attribute paths (`row.e` for a field of a struct-typed field), in wire order."""
    return [(path[1:], ft) for path, ft in leaf_fields(t, "")]


def _scalar_leaves(t: StructT) -> bool:
    return all(isinstance(underlying(ft), (BitsT, BoolT)) for _, ft in leaf_fields(t, ""))


def has_varbit(t: P4Type) -> bool:
    return isinstance(t, HeaderT) and any(isinstance(ft, VarbitT) for _, ft in t.fields)


def varbit_info(t: HeaderT) -> tuple[int, int]:
    """(fixed width in bits, the varbit field's maximum width) of a header with a varbit field."""
    fixed = sum(width_of(ft) or 0 for _, ft in t.fields if not isinstance(ft, VarbitT))
    maximum = next(ft.max_width for _, ft in t.fields if isinstance(ft, VarbitT))
    return fixed, maximum


def scalar_width(t: P4Type) -> int:
    """Width of a scalar value in generated code (bool counts 1, enums their underlying width, error 32)."""
    u = underlying(t)
    if isinstance(u, BitsT):
        return u.width
    if isinstance(u, BoolT):
        return 1
    if isinstance(t, (ErrorT, EnumT)):
        return 32
    w = width_of(t)
    return w if w is not None else 0


def leaf_fields(t: P4Type, path: str) -> list[tuple[str, P4Type]]:
    """Flatten a struct/header value into (python access path, scalar type) pairs, in declaration order."""
    if isinstance(t, (StructT, HeaderT)):
        out: list[tuple[str, P4Type]] = []
        for f, ft in t.fields:
            out += leaf_fields(ft, f"{path}.{pyname(f)}")
        return out
    return [(path, t)]
