"""v1model and core externs -> Python, with BMv2 simple_switch's behaviour.

Registers index flat lists (an out-of-range read leaves the destination unchanged and an out-of-range write is
ignored, as BMv2 does); counters and meters call the runtime state; clone/resubmit/recirculate/truncate record
requests on the packet context for the engine; hashes and checksums go through `rt` with BMv2's algorithms over the
fields of valid headers only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4switch.codegen.exprs import CodegenError, mask
from p4switch.codegen.layout import class_name, has_varbit, is_object, pyname, varbit_info
from p4switch.codegen.names import py_str
from p4switch.frontend import ast
from p4switch.frontend.scope import Var
from p4switch.frontend.typecheck import CallInfo
from p4switch.frontend.types import (
    BitsT,
    BoolT,
    ExternT,
    HeaderT,
    HeaderUnionT,
    P4Type,
    StackT,
    StructT,
    underlying,
    width_of,
)

if TYPE_CHECKING:
    from p4switch.codegen.blocks import BlockGen
    from p4switch.codegen.module import ModuleGen

# v1model `enum HashAlgorithm` member -> BMv2 algorithm name
HASH_NAMES = {
    "crc32": "crc32",
    "crc32_custom": "crc32_custom",
    "crc16": "crc16",
    "crc16_custom": "crc16_custom",
    "random": "random",
    "identity": "identity",
    "csum16": "csum16",
    "xor16": "xor16",
}
DROP_PORT = 511


class ExternGen:
    def __init__(self, mod: ModuleGen) -> None:
        self.mod = mod
        self.typed = mod.typed

    def arg(self, info: CallInfo, index: int) -> ast.Expression:
        a = info.args[index]
        if a is None:
            raise CodegenError(self.mod.current, f"{info.name}: argument {index + 1} missing")
        return a.value

    def algo(self, g: BlockGen, e: ast.Expression) -> str:
        value = self.typed.consts.get(e)
        if isinstance(value, tuple) and value[0] == "enum":
            return str(HASH_NAMES.get(value[2], value[2]))
        raise CodegenError(e, "the hash algorithm must be a HashAlgorithm constant")

    def store_out(self, g: BlockGen, target: ast.Expression, value: str, t: P4Type) -> None:
        if isinstance(target, ast.DontCare):
            return
        if isinstance(target, ast.Slice):
            g.assign_slice_value(target, value)
        else:
            g.store(target, value)

    # ----------------------------------------------------------------------------------------------- functions
    def function(self, g: BlockGen, call: ast.Call, info: CallInfo, *, statement: bool) -> str:
        name = info.name
        sm = "ctx.sm"
        if name == "mark_to_drop":
            if info.args and info.args[0] is not None:
                sm = g.x.expr(info.args[0].value)
            g.w(f"{sm}.egress_spec = {DROP_PORT}")
            g.w(f"{sm}.mcast_grp = 0")
            return ""
        if name == "verify":
            cond = g.x.cond(self.arg(info, 0))
            code = g.x.expr(self.arg(info, 1))
            g.w(f"if not {cond}:")
            g.w(f"    raise _PErr({code})")
            return ""
        if name == "hash":
            out = self.arg(info, 0)
            ot = underlying(self.typed.types[out])
            algo = self.algo(g, self.arg(info, 1))
            base = g.x.expr(self.arg(info, 2))
            fields = g.field_list(self.arg(info, 3))
            maximum = g.x.expr(self.arg(info, 4))
            width = ot.width if isinstance(ot, BitsT) else 32
            self.store_out(g, out, f"(_hash_range({algo!r}, {fields}, {base}, {maximum}) & {mask(width)})", ot)
            return ""
        if name == "random":
            out = self.arg(info, 0)
            ot = underlying(self.typed.types[out])
            width = ot.width if isinstance(ot, BitsT) else 32
            lo = g.x.expr(self.arg(info, 1))
            hi = g.x.expr(self.arg(info, 2))
            self.store_out(g, out, f"(_rt.random({lo}, {hi}) & {mask(width)})", ot)
            return ""
        if name == "digest":
            data = self.arg(info, 1)
            t = info.type_args.get("T")
            dname = self.mod.digest_name(t)
            values = g.value_list(data)
            g.w(f"_rt.digest({dname!r}, ({''.join(v + ', ' for v in values)}))")
            return ""
        if name in ("clone", "clone_preserving_field_list", "clone3"):
            ctype = g.x.expr(self.arg(info, 0))
            session = g.x.expr(self.arg(info, 1))
            field_list = "None"
            if name == "clone_preserving_field_list":
                field_list = g.x.expr(self.arg(info, 2))
            elif name == "clone3":
                field_list = str(self.legacy_field_list(self.arg(info, 2)))
            g.w(f"ctx.clone_requests.append(({ctype}, {session}, {field_list}))")
            return ""
        if name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
            which = "resubmit" if name.startswith("resubmit") else "recirculate"
            g.w(f"ctx.{which}_field_list = {g.x.expr(self.arg(info, 0))}")
            return ""
        if name in ("resubmit", "recirculate"):
            # the deprecated forms take the data to preserve; it becomes a synthetic field list
            g.w(f"ctx.{name}_field_list = {self.legacy_field_list(self.arg(info, 0))}")
            return ""
        if name == "truncate":
            g.w(f"ctx.truncate_length = {g.x.expr(self.arg(info, 0))}")
            return ""
        if name in ("assert", "assume"):
            cond = g.x.cond(self.arg(info, 0))
            g.w(f"if not {cond}:")
            g.w(f"    raise _AssertFailed({py_str(f'{name} failed at {call.loc}')})")
            return ""
        if name == "log_msg":
            msg = g.x.expr(self.arg(info, 0))
            if len(info.args) > 1 and info.args[1] is not None:
                values = g.value_list(self.arg(info, 1))
                g.w(f"_rt.log({msg}, ({''.join(v + ', ' for v in values)}))")
            else:
                g.w(f"_rt.log({msg})")
            return ""
        if name in ("verify_checksum", "verify_checksum_with_payload", "update_checksum",
                    "update_checksum_with_payload"):
            cond = g.x.cond(self.arg(info, 0))
            fields = g.field_list(self.arg(info, 1))
            target = self.arg(info, 2)
            algo_name = self.algo(g, self.arg(info, 3))
            tt = underlying(self.typed.types[target])
            width = tt.width if isinstance(tt, BitsT) else 16
            payload = name.endswith("_with_payload")
            input_bytes = f"_fbytes({fields})" + (" + ctx.data[ctx.payload_offset:]" if payload else "")
            value = f"(_hasher({algo_name!r})({input_bytes}) & {mask(width)})"
            if algo_name == "csum16" and not payload:
                # the Internet checksum of the packed fields, with no bytes built (csum16 cannot be reconfigured)
                value = f"({g.csum16(self.arg(info, 1))} & {mask(width)})"
            if name.startswith("verify"):
                g.w(f"if {cond} and {value} != {g.x.expr(target)}:")
                g.w("    ctx.sm.checksum_error = 1")
            else:
                g.w(f"if {cond}:")
                g.level += 1
                self.store_out(g, target, value, tt)
                g.level -= 1
            return ""
        raise CodegenError(call, f"extern function {name} is not supported by this target")

    # ------------------------------------------------------------------------------------------------- methods
    def method(self, g: BlockGen, call: ast.Call, info: CallInfo, *, statement: bool) -> str:
        recv = info.receiver
        assert recv is not None
        rt = self.typed.types[recv]
        assert isinstance(rt, ExternT)
        ext = rt.name
        name = info.name
        if ext == "packet_in":
            return self.packet_in(g, call, info)
        if ext == "packet_out":
            if name == "emit":
                self.emit(g, self.arg(info, 0))
                return ""
        obj = g.x.expr(recv)
        var = self.typed.refs.get(recv)
        size = self.mod.instance_size(var) if isinstance(var, Var) else 0
        if ext == "register":
            if name == "read":
                if len(info.params) == 2:
                    out = self.arg(info, 0)
                    index = g.x.expr(self.arg(info, 1))
                    idx = self._index_var(g, index)
                    g.w(f"if {idx} < {size}:")
                    g.level += 1
                    self.store_out(g, out, f"{obj}[{idx}]", rt.args[0])
                    g.level -= 1
                    return ""
                index = g.x.expr(self.arg(info, 0))
                return f"({obj}[{index}] if {index} < {size} else 0)"
            if name == "write":
                index = g.x.expr(self.arg(info, 0))
                value = g.x.expr(self.arg(info, 1))
                g.w(f"if {index} < {size}:")
                g.w(f"    {obj}[{index}] = {value}")
                return ""
        if ext == "counter" and name == "count":
            index = g.x.expr(self.arg(info, 0))
            g.w(f"if {index} < {size}:")
            g.w(f"    {obj}.count({index}, ctx.sm.packet_length)")
            return ""
        if ext == "direct_counter" and name == "count":
            return ""  # BMv2 counts the matched entry when the table is applied
        if ext == "meter" and name == "execute_meter":
            index = g.x.expr(self.arg(info, 0))
            out = self.arg(info, 1)
            ot = underlying(self.typed.types[out])
            width = ot.width if isinstance(ot, BitsT) else 32
            idx = self._index_var(g, index)
            g.w(f"if {idx} < {size}:")
            g.level += 1
            self.store_out(g, out, f"({obj}.execute({idx}, {self.mod.meter_units(var)}, _rt.now_us()) & "
                                   f"{mask(width)})", ot)
            g.level -= 1
            return ""
        if ext == "direct_meter" and name == "read":
            out = self.arg(info, 0)
            self.store_out(g, out, "cl._dm", self.typed.types[out])
            return ""
        if ext == "Checksum16" and name == "get":
            return g.csum16(self.arg(info, 0))
        if ext == "value_set":
            raise CodegenError(call, "value sets are used in select cases only")
        raise CodegenError(call, f"{ext}.{name} is not supported by this target")

    def legacy_field_list(self, data: ast.Expression) -> int:
        """The user-metadata fields named by a deprecated `resubmit(data)`/`recirculate(data)`/`clone3(.., data)`
        as a field list of their own (ids above the 8-bit range of `@field_list`). Other values (standard metadata,
        headers) are not preserved, as in BMv2's v1model."""
        meta_t = self.mod.meta_type()
        names: list[str] = []

        def visit(e: ast.Expression) -> None:
            if isinstance(e, (ast.ListExpression,)):
                for item in e.items:
                    visit(item)
            elif isinstance(e, ast.StructExpression):
                for f in e.fields:
                    visit(f.value)
            elif isinstance(e, ast.Name) and self.typed.types.get(e) == meta_t and isinstance(meta_t, StructT):
                names.extend(f for f, _ in meta_t.fields)
            elif isinstance(e, ast.Member) and self.typed.types.get(e.expr) == meta_t:
                names.append(e.member)

        visit(data)
        return self.mod.synthetic_field_list(names)

    def _index_var(self, g: BlockGen, code: str) -> str:
        if code.replace("_", "").replace(".", "").isalnum():
            return code
        tmp = g.tmp("i")
        g.w(f"{tmp} = {code}")
        return tmp

    # ------------------------------------------------------------------------------------------------- packets
    def packet_in(self, g: BlockGen, call: ast.Call, info: CallInfo) -> str:
        name = info.name
        if name == "extract":
            if len(info.params) == 2:
                self.extract_varbit(g, self.arg(info, 0), self.arg(info, 1))
                return ""
            self.extract(g, self.arg(info, 0))
            return ""
        if name == "lookahead":
            t = info.type_args.get("T")
            if t is None:
                raise CodegenError(call, "lookahead needs a type argument")
            ut = underlying(t)
            if isinstance(ut, BitsT):
                return f"_la(d, p, n, {ut.width})"
            if isinstance(ut, BoolT):
                return "bool(_la(d, p, n, 1))"
            if isinstance(t, HeaderT):
                nb = (width_of(t) or 0) // 8
                return f"_lah({class_name(t)}, x_{class_name(t)}, d, p, n, {nb})"
            if isinstance(t, StructT) and width_of(t):
                return self.lookahead_struct(g, t)
            raise CodegenError(call, f"lookahead<{t}> is not supported by this target")
        if name == "advance":
            amount = g.x.expr(self.arg(info, 0))
            g.w(f"p = _adv(p, n, {amount})")
            return ""
        if name == "length":
            return "n"
        raise CodegenError(call, f"packet_in.{name} is not supported")

    def lookahead_struct(self, g: BlockGen, t: StructT) -> str:
        """`lookahead<S>()` for a struct: its fields, in order, from the next `width_of(S)` bits without consuming
        them (P4_16 12.8.2); headers inside come back valid, as `extract` would leave them."""
        total = width_of(t) or 0
        v, o = g.tmp("la"), g.tmp("o")
        g.w(f"{v} = _la(d, p, n, {total})")
        g.w(f"{o} = {class_name(t)}()")
        shift = total

        def fill(st: StructT | HeaderT, path: str) -> None:
            nonlocal shift
            if isinstance(st, HeaderT):
                g.w(f"{path}._v = True")
            for f, ft in st.fields:
                if isinstance(ft, (StructT, HeaderT)):
                    fill(ft, f"{path}.{pyname(f)}")
                    continue
                w = width_of(ft) or 0
                shift -= w
                value = f"({v} >> {shift}) & {hex((1 << w) - 1)}"
                g.w(f"{path}.{pyname(f)} = {'bool(' + value + ')' if isinstance(underlying(ft), BoolT) else value}")

        fill(t, o)
        return o

    def extract_varbit(self, g: BlockGen, target: ast.Expression, size: ast.Expression) -> None:
        """`extract(hdr, bits)`: HeaderTooShort when `bits` exceeds the varbit's maximum, ParserInvalidArgument
        when the header would not be a whole number of bytes, PacketTooShort when the packet ends first."""
        t = self.typed.types[target]
        if not isinstance(t, HeaderT) or not has_varbit(t):
            raise CodegenError(target, "extract with a size needs a header with a varbit field")
        fixed, maximum = varbit_info(t)
        obj = g.x.expr(target)
        vb = g.tmp("vb")
        g.w(f"{vb} = {g.x.expr(size)}")
        g.w(f"if {vb} > {maximum}:")
        g.w(f"    raise _PErr({self.mod.error_code('HeaderTooShort')})")
        g.w(f"if ({fixed} + {vb}) & 7:")
        g.w(f"    raise _PErr({self.mod.error_code('ParserInvalidArgument')})")
        g.w(f"if p + (({fixed} + {vb}) >> 3) > n:")
        g.w(f"    raise _PErr({self.mod.error_code('PacketTooShort')})")
        g.w(f"x_{class_name(t)}({obj}, d, p, {vb})")
        if isinstance(target, ast.Member) and target.member == "next" and isinstance(
                self.typed.types.get(target.expr), StackT):
            g.w(f"{g.x.expr(target.expr)}.ni += 1")  # `_next` only checks the bound: the extract advances
        g.w(f"p += ({fixed} + {vb}) >> 3")

    def extract(self, g: BlockGen, target: ast.Expression) -> None:
        t = self.typed.types[target]
        if not isinstance(t, HeaderT):
            raise CodegenError(target, f"extract needs a header, not {t}")
        if has_varbit(t):
            raise CodegenError(target, f"{t} has a varbit field: extract it with a size")
        cname = class_name(t)
        nb = (width_of(t) or 0) // 8
        if isinstance(target, ast.Member) and target.member == "next" and isinstance(
                self.typed.types.get(target.expr), StackT):
            stack = g.x.expr(target.expr)
            size = self.typed.types[target.expr].size  # type: ignore[attr-defined]
            s = g.tmp("s")
            g.w(f"{s} = {stack}")
            g.w(f"if {s}.ni >= {size}:")
            g.w(f"    raise _PErr({self.mod.error_code('StackOutOfBounds')})")
            g.w(f"if p + {nb} > n:")
            g.w(f"    raise _PErr({self.mod.error_code('PacketTooShort')})")
            g.w(f"x_{cname}({s}.e[{s}.ni], d, p)")
            g.w(f"{s}.ni += 1")
            g.w(f"p += {nb}")
            return
        obj = g.x.expr(target)
        g.w(f"if p + {nb} > n:")
        g.w(f"    raise _PErr({self.mod.error_code('PacketTooShort')})")
        if isinstance(target, ast.Member):
            parent_t = self.typed.types.get(target.expr)
            if isinstance(parent_t, HeaderUnionT):
                parent = g.x.expr(target.expr)
                for f, _ in parent_t.fields:
                    if f != target.member:
                        g.w(f"{parent}.{pyname(f)}._v = False")
        g.w(f"x_{cname}({obj}, d, p)")
        g.w(f"p += {nb}")

    def emit(self, g: BlockGen, e: ast.Expression) -> None:
        t = self.typed.types[e]
        code = g.x.expr(e)
        self._emit_value(g, code, t)

    def _emit_value(self, g: BlockGen, code: str, t: P4Type) -> None:
        if isinstance(t, HeaderT):
            g.w(f"if {code}._v:")
            g.w(f"    _o.append(e_{class_name(t)}({code}))")
        elif isinstance(t, StackT):
            v = g.tmp("e")
            g.w(f"for {v} in {code}.e:")
            g.level += 1
            self._emit_value(g, v, t.element)
            g.level -= 1
        elif isinstance(t, (StructT, HeaderUnionT)):
            for f, ft in t.fields:
                self._emit_value(g, f"{code}.{pyname(f)}", ft)
        elif is_object(t):
            raise CodegenError(self.mod.current, f"cannot emit a value of type {t}")
        else:
            raise CodegenError(self.mod.current, f"emit needs a header, stack, union or struct, not {t}")
