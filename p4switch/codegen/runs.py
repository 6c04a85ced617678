"""Header classes whose field runs live in numpy arrays: allocated lazily, shared copy-on-write between copies.

A run `k` (the fields from field `k` on, `vector.field_run`) is the array in slot `_a<k>`, reached by generated
code through the property `_r<k>`. Two things make a packet cheaper than a plain array slot would:

- lazy storage: a new header holds no array (`None`, read as zeros); the parser's extract stores the decoded array,
  and the first access through `_r<k>` of a header that was never extracted allocates zeros. p4ina.p4 declares
  three value headers (32-, 16- and 8-bit lanes) and extracts one: the other two cost nothing.
- copy-on-write copies: `copy()` (multicast replicas and clones, `clone_ctx`) shares the arrays and marks both
  headers shared (slot `_sh`: a list shared by every header holding the same arrays, else None). Every access
  through `_r<k>` (read or write, by vector code, `RunField` or a rebinding) first gives a shared header private
  copies (`_own`), so an array that was ever shared is never changed again, by anyone. The emitter alone reads
  `_a<k>` directly: it only reads, and it caches the big-endian bytes in the shared list, so the replicas of a
  multicast whose egress does not touch the run encode it once.

Every path that replaces a header's arrays (extract, `set_valid` of an invalid header, `assign`, `_own`) replaces
all of them and drops `_sh`: the headers holding one `_sh` list hold the same arrays, so its cached encodings stay
right."""

from __future__ import annotations

from p4switch.codegen.layout import pyname
from p4switch.frontend.types import BoolT, HeaderT, underlying, width_of


def header_class(name: str, t: HeaderT, runs: dict[int, tuple[int, int]]) -> list[str]:
    """The class of header type `t` with the numpy runs `runs` ({first field: (count, width)}): its other fields
    are plain slots; every run field stays reachable by name (`vecops.RunField` through `_r<k>`)."""
    fields = [pyname(f) for f, _ in t.fields]
    in_run: dict[int, tuple[int, int]] = {}
    for first, (count, _w) in runs.items():
        for j in range(count):
            in_run[first + j] = (first, j)
    plain = [fields[i] for i in range(len(fields)) if i not in in_run]
    arrays = [f"_a{first}" for first in runs]
    first_array = arrays[0]
    zeros = {first: f"_vx.zeros({count}, _vx.u{w})" for first, (count, w) in runs.items()}
    slots = ", ".join(repr(s) for s in ["_v", *plain, *arrays, "_sh"])
    eq_names = ", ".join(repr(s) for s in [*plain, *(f"_r{first}" for first in runs)])
    out = [f"class {name}:", f"    __slots__ = ({slots},)", f"    _eqf = ({eq_names},)", "",
           "    def __init__(self):", "        self._v = False"]
    out += [f"        self.{f} = 0" for f in plain]
    out += [f"        self.{a} = None" for a in arrays]
    out += ["        self._sh = None"]
    # copy: share the arrays (if any: a header never extracted has none, and its copy need not be shared)
    out += ["", "    def copy(self):", f"        o = {name}.__new__({name})", "        o._v = self._v"]
    out += [f"        o.{f} = self.{f}" for f in plain]
    out += [f"        o.{a} = self.{a}" for a in arrays]
    out += [f"        if self.{first_array} is None:", "            o._sh = None", "        else:",
            "            s = self._sh", "            if s is None:", f"                s = self._sh = [None] * {len(runs)}",
            "            o._sh = s", "        return o"]
    # assign: private copies of the source's arrays (the source may be shared: it is only read)
    out += ["", "    def assign(self, s):", "        self._v = s._v"]
    out += [f"        self.{f} = s.{f}" for f in plain]
    out += [f"        self.{a} = None if s.{a} is None else s.{a}.copy()" for a in arrays]
    out += ["        self._sh = None"]
    out += ["", "    def set_valid(self):", "        if not self._v:"]
    out += [f"            self.{f} = 0" for f in plain]
    out += [f"            self._a{first} = {zeros[first]}" for first in runs]
    out += ["            self._sh = None", "            self._v = True"]
    # _own: arrays of its own before any access through _r<k> (zeros where none was allocated)
    out += ["", "    def _own(self):", "        s = self._sh", "        self._sh = None",
            f"        if self.{first_array} is None:"]
    out += [f"            self._a{first} = {zeros[first]}" for first in runs]
    out += ["        elif s is not None:"]
    out += [f"            self.{a} = self.{a}.copy()" for a in arrays]
    for first in runs:
        out += ["", f"    def _ga{first}(self):", f"        if self._sh is not None or self._a{first} is None:",
                "            self._own()", f"        return self._a{first}", "",
                f"    def _sa{first}(self, v):", f"        if self._sh is not None or self._a{first} is None:",
                "            self._own()", f"        self._a{first} = v", "",
                f"    _r{first} = property(_ga{first}, _sa{first})"]
    out += ["", "    def values(self):", "        return (" + "".join(f"self.{f}, " for f in fields) + ")"]
    out += ["", "    def set_values(self, vals):", "        (" + "".join(f"self.{f}, " for f in fields) + ") = vals",
            "        self._v = True"]
    out += ["", "    def __repr__(self):",
            f"        return '{t.name}(' + ('valid' if self._v else 'invalid') + ', ' + repr(self.values()) + ')'",
            ""]
    for i, f in enumerate(fields):
        if i in in_run:
            first, j = in_run[i]
            out.append(f"    {f} = _vx.RunField('_r{first}', {j})")
    out += ["", ""]
    return out + _codecs(name, t, runs)


def _codecs(name: str, t: HeaderT, runs: dict[int, tuple[int, int]]) -> list[str]:
    """`x_<T>(o, d, p)` and `e_<T>(o)`: runs with numpy, the byte-aligned stretches between them as big ints. The
    emitter encodes a shared run once for all the headers sharing it (the module docstring)."""
    ext = [f"def x_{name}(o, d, p):"]
    enc: list[str] = []
    parts: list[str] = []
    offset = 0  # bits
    i = 0
    n = len(t.fields)
    while i < n:
        if i in runs:
            count, w = runs[i]
            k = len(enc)
            ext.append(f"    o._a{i} = _vx.decode(d, p + {offset // 8}, {count}, {w})")
            enc += [f"    a = o._a{i}", "    if a is None:", f"        a = _vx.zeros({count}, _vx.u{w})",
                    "    if s is None:", f"        e{k} = a.astype(_vx.be{w})", "    else:", f"        e{k} = s[{k}]",
                    f"        if e{k} is None:", f"            e{k} = s[{k}] = a.astype(_vx.be{w})"]
            parts.append(f"e{k}")
            offset += count * w
            i += count
            continue
        j = i
        seg: list[tuple[str, int, bool]] = []
        while j < n and j not in runs:
            fname, ft = t.fields[j]
            seg.append((pyname(fname), width_of(ft) or 0, isinstance(underlying(ft), BoolT)))
            j += 1
        total = sum(w for _, w, _ in seg)
        nb = total // 8
        start = offset // 8
        ext.append(f"    v = _ifb(d[p + {start}:p + {start + nb}], 'big')")
        shift = total
        emit_terms = []
        for f, w, is_bool in seg:
            shift -= w
            value = f"((v >> {shift}) & {hex((1 << w) - 1)})"
            ext.append(f"    o.{f} = {'bool(' + value + ')' if is_bool else value}")
            term = f"int(o.{f})" if is_bool else f"o.{f}"
            emit_terms.append(term if shift == 0 else f"({term} << {shift})")
        parts.append(f"({' | '.join(emit_terms)}).to_bytes({nb}, 'big')")
        offset += total
        i = j
    ext += ["    o._sh = None", "    o._v = True", "", ""]
    # a bytes-like part (a run's big-endian array) goes to the deparser's join as it is, unless it must be joined here
    body = parts[0] if len(parts) == 1 else f"b''.join(({''.join(p + ', ' for p in parts)}))"
    emit = [f"def e_{name}(o):", "    s = o._sh", *enc, f"    return {body}", "", ""]
    return ext + emit

