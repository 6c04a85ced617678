"""P4Info generation: the control-plane model -> `p4.config.v1.P4Info`, shaped and numbered as p4c-bm2-ss does.

`build_p4info` assigns ids (`frontend.symbols`) and fills the message in p4c's order; `to_text` renders it as p4c's
`--p4runtime-files x.txtpb` does (two comment lines, a blank line, protobuf text format), so that our output can be
compared byte for byte with real p4c output.
"""

from __future__ import annotations

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2, p4types_pb2

from p4switch.frontend import cpmodel as cp
from p4switch.frontend.symbols import IdPrefix, SymbolTable

HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"

_MATCH = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
_COUNTER_UNIT = {
    "PACKETS": p4info_pb2.CounterSpec.PACKETS,
    "BYTES": p4info_pb2.CounterSpec.BYTES,
    "BOTH": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNIT = {"PACKETS": p4info_pb2.MeterSpec.PACKETS, "BYTES": p4info_pb2.MeterSpec.BYTES}


def value_bytes(value: int, bitwidth: int) -> bytes:
    """A constant as p4c writes it into P4Info/P4Runtime messages: big-endian, padded to whole bytes of the width."""
    nbytes = max((bitwidth + 7) // 8, 1)
    return (value & ((1 << max(bitwidth, 1)) - 1)).to_bytes(nbytes, "big")


def collect_symbols(model: cp.ControlPlane) -> SymbolTable:
    """Register every P4Info-visible name in the order p4c visits them (aliases depend on the whole set)."""
    symbols = SymbolTable()
    for action in model.actions:
        symbols.add(IdPrefix.ACTION, action.name, action.explicit_id)
    for table in model.tables:
        symbols.add(IdPrefix.TABLE, table.name, table.explicit_id)
    for counter in model.counters:
        kind = IdPrefix.DIRECT_COUNTER if counter.direct_table else IdPrefix.COUNTER
        symbols.add(kind, counter.name, counter.explicit_id)
    for meter in model.meters:
        kind = IdPrefix.DIRECT_METER if meter.direct_table else IdPrefix.METER
        symbols.add(kind, meter.name, meter.explicit_id)
    for register in model.registers:
        symbols.add(IdPrefix.REGISTER, register.name, register.explicit_id)
    for digest in model.digests:
        symbols.add(IdPrefix.DIGEST, digest.name, digest.explicit_id)
    for value_set in model.value_sets:
        symbols.add(IdPrefix.VALUE_SET, value_set.name, value_set.explicit_id)
    for profile in model.action_profiles:
        symbols.add(IdPrefix.ACTION_PROFILE, profile.name, profile.explicit_id)
    for header in model.controller_headers:
        # p4c hashes the header *type* name; the preamble shows the @controller_header name
        symbols.add(IdPrefix.CONTROLLER_HEADER, header.type_name, header.explicit_id)
    symbols.compute_ids()
    return symbols


def _allocate_field_ids(explicit: list[int | None]) -> list[int]:
    """p4c's FieldIdAllocator: @id values first, the rest numbered by position, skipping taken ids."""
    taken = {i for i in explicit if i is not None}
    result: list[int] = []
    index = 1
    for value in explicit:
        if value is not None:
            result.append(value)
            index += 1
            continue
        while index in taken:
            index += 1
        result.append(index)
        taken.add(index)
    return result


def _preamble(pre: p4info_pb2.Preamble, symbols: SymbolTable, kind: IdPrefix, name: str,
              annotations: list[str], alias: str | None = None) -> None:
    pre.id = symbols.id_of(kind, name)
    pre.name = name
    pre.alias = alias if alias is not None else symbols.alias(name)
    pre.annotations.extend(annotations)


def _type_spec(spec: cp.TypeSpec, out: p4types_pb2.P4DataTypeSpec) -> None:
    if spec.kind == "bit":
        out.bitstring.bit.bitwidth = spec.bitwidth
    elif spec.kind == "int":
        out.bitstring.int.bitwidth = spec.bitwidth
    elif spec.kind == "bool":
        out.bool.SetInParent()
    elif spec.kind == "struct":
        out.struct.name = spec.name
    elif spec.kind == "header":
        out.header.name = spec.name
    elif spec.kind == "serializable_enum":
        out.serializable_enum.name = spec.name
    elif spec.kind == "new_type":
        out.new_type.name = spec.name
    elif spec.kind == "tuple":
        for member in spec.members:
            _type_spec(member, out.tuple.members.add())


def _add_table(info: p4info_pb2.P4Info, symbols: SymbolTable, table: cp.Table) -> None:
    msg = info.tables.add()
    _preamble(msg.preamble, symbols, IdPrefix.TABLE, table.name, table.annotations)
    ids = _allocate_field_ids([f.explicit_id for f in table.match_fields])
    for field_id, field in zip(ids, table.match_fields, strict=False):
        mf = msg.match_fields.add()
        mf.id = field_id
        mf.name = field.name
        mf.annotations.extend(field.annotations)
        mf.bitwidth = field.bitwidth
        if field.match_kind in _MATCH:
            mf.match_type = _MATCH[field.match_kind]
        else:
            mf.other_match_type = field.match_kind
        if field.type_name:
            mf.type_name.name = field.type_name
    for ref in table.action_refs:
        ar = msg.action_refs.add()
        ar.id = symbols.id_of(IdPrefix.ACTION, ref.action)
        ar.scope = p4info_pb2.ActionRef.Scope.Value(ref.scope)
        ar.annotations.extend(ref.annotations)
    if table.default_action is not None:
        default = table.default_action
        action_id = symbols.id_of(IdPrefix.ACTION, default.action)
        if default.is_const:
            msg.const_default_action_id = action_id
        call = msg.initial_default_action
        call.action_id = action_id
        for index, (value, width) in enumerate(default.args, start=1):
            arg = call.arguments.add()
            arg.param_id = index
            arg.value = value_bytes(value, width)
    if table.implementation:
        msg.implementation_id = symbols.id_of(IdPrefix.ACTION_PROFILE, table.implementation)
    if table.direct_counter:
        msg.direct_resource_ids.append(symbols.id_of(IdPrefix.DIRECT_COUNTER, table.direct_counter))
    if table.direct_meter:
        msg.direct_resource_ids.append(symbols.id_of(IdPrefix.DIRECT_METER, table.direct_meter))
    msg.size = table.size
    if table.supports_timeout:
        msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
    if table.is_const:
        msg.is_const_table = True
    if table.has_entries:
        msg.has_initial_entries = True


def _add_action(info: p4info_pb2.P4Info, symbols: SymbolTable, action: cp.Action) -> None:
    msg = info.actions.add()
    _preamble(msg.preamble, symbols, IdPrefix.ACTION, action.name, action.annotations)
    ids = _allocate_field_ids([p.explicit_id for p in action.params])
    for param_id, param in zip(ids, action.params, strict=False):
        pm = msg.params.add()
        pm.id = param_id
        pm.name = param.name
        pm.annotations.extend(param.annotations)
        pm.bitwidth = param.bitwidth
        if param.type_name:
            pm.type_name.name = param.type_name


def _add_action_profile(info: p4info_pb2.P4Info, symbols: SymbolTable, profile: cp.ActionProfile,
                        tables: list[cp.Table]) -> None:
    """p4c's addActionProfile: table_ids of the tables implemented by it (p4c keeps them in a name-ordered set),
    max_group_size from @max_group_size on selectors only; p4c 1.2.5.16's stored outputs show `sum_of_weights {}`
    exactly where a selector has @max_group_size, and `sum_of_members` from @selector_size_semantics."""
    msg = info.action_profiles.add()
    _preamble(msg.preamble, symbols, IdPrefix.ACTION_PROFILE, profile.name, profile.annotations)
    for table_name in sorted({t.name for t in tables if t.implementation == profile.name}):
        msg.table_ids.append(symbols.id_of(IdPrefix.TABLE, table_name))
    if profile.with_selector:
        msg.with_selector = True
    msg.size = profile.size
    if profile.with_selector and profile.max_group_size:
        msg.max_group_size = profile.max_group_size
    if profile.with_selector:
        if profile.size_semantics == "sum_of_members":
            msg.sum_of_members.SetInParent()
            if profile.max_member_weight:
                msg.sum_of_members.max_member_weight = profile.max_member_weight
        elif profile.size_semantics == "sum_of_weights" or profile.max_group_size:
            msg.sum_of_weights.SetInParent()


def _add_type_info(info: p4info_pb2.P4Info, model: cp.ControlPlane) -> None:
    if not (model.type_info_used or model.structs or model.ser_enums or model.new_types):
        return
    type_info = info.type_info
    type_info.SetInParent()
    for name, struct in model.structs.items():
        target = type_info.headers[name] if struct.is_header else type_info.structs[name]
        for member_name, spec in struct.members:
            member = target.members.add()
            member.name = member_name
            if struct.is_header:
                member.type_spec.bitstring.bit.bitwidth = spec.bitwidth
                if spec.kind == "int":
                    member.type_spec.bitstring.ClearField("bit")
                    member.type_spec.bitstring.int.bitwidth = spec.bitwidth
            else:
                _type_spec(spec, member.type_spec)
    for name, enum in model.ser_enums.items():
        entry = type_info.serializable_enums[name]
        entry.underlying_type.bitwidth = enum.bitwidth
        for member_name, value in enum.members:
            m = entry.members.add()
            m.name = member_name
            m.value = value_bytes(value, enum.bitwidth)
    for name, new_type in model.new_types.items():
        spec = type_info.new_types[name]
        if new_type.translation is not None:
            uri, width = new_type.translation
            spec.translated_type.uri = uri
            if width:
                spec.translated_type.sdn_bitwidth = width
            else:
                spec.translated_type.sdn_string.SetInParent()
        else:
            spec.original_type.bitstring.bit.bitwidth = new_type.bitwidth


def build_p4info(model: cp.ControlPlane, arch: str = "v1model") -> p4info_pb2.P4Info:
    """The P4Info message for `model`, with p4c's ids, aliases and entity order."""
    symbols = collect_symbols(model)
    info = p4info_pb2.P4Info()
    for key, value in model.pkg_fields.items():
        setattr(info.pkg_info, key, value)
    info.pkg_info.arch = model.pkg_fields.get("arch", arch)
    info.pkg_info.annotations.extend(model.pkg_annotations)
    for table in model.tables:
        _add_table(info, symbols, table)
    for action in model.actions:
        _add_action(info, symbols, action)
    for profile in model.action_profiles:
        _add_action_profile(info, symbols, profile, model.tables)
    for counter in model.counters:
        if counter.direct_table:
            dc = info.direct_counters.add()
            _preamble(dc.preamble, symbols, IdPrefix.DIRECT_COUNTER, counter.name, counter.annotations)
            dc.spec.unit = _COUNTER_UNIT[counter.unit]
            dc.direct_table_id = symbols.id_of(IdPrefix.TABLE, counter.direct_table)
        else:
            c = info.counters.add()
            _preamble(c.preamble, symbols, IdPrefix.COUNTER, counter.name, counter.annotations)
            c.spec.unit = _COUNTER_UNIT[counter.unit]
            c.size = counter.size
    for meter in model.meters:
        if meter.direct_table:
            dm = info.direct_meters.add()
            _preamble(dm.preamble, symbols, IdPrefix.DIRECT_METER, meter.name, meter.annotations)
            dm.spec.unit = _METER_UNIT[meter.unit]
            dm.direct_table_id = symbols.id_of(IdPrefix.TABLE, meter.direct_table)
        else:
            m = info.meters.add()
            _preamble(m.preamble, symbols, IdPrefix.METER, meter.name, meter.annotations)
            m.spec.unit = _METER_UNIT[meter.unit]
            m.size = meter.size
    for header in model.controller_headers:
        ch = info.controller_packet_metadata.add()
        _preamble(ch.preamble, symbols, IdPrefix.CONTROLLER_HEADER, header.type_name, header.annotations,
                  alias=header.name)
        ch.preamble.name = header.name
        ids = _allocate_field_ids([f.explicit_id for f in header.fields])
        for field_id, field in zip(ids, header.fields, strict=False):
            md = ch.metadata.add()
            md.id = field_id
            md.name = field.name
            md.annotations.extend(field.annotations)
            md.bitwidth = field.bitwidth
            if field.type_name:
                md.type_name.name = field.type_name
    for value_set in model.value_sets:
        vs = info.value_sets.add()
        _preamble(vs.preamble, symbols, IdPrefix.VALUE_SET, value_set.name, value_set.annotations)
        ids = _allocate_field_ids([f.explicit_id for f in value_set.match])
        for field_id, vfield in zip(ids, value_set.match, strict=False):
            mf = vs.match.add()
            mf.id = field_id
            if vfield.name:
                mf.name = vfield.name
            mf.annotations.extend(vfield.annotations)
            mf.bitwidth = vfield.bitwidth
            mf.match_type = _MATCH.get(vfield.match_kind, p4info_pb2.MatchField.EXACT)
        vs.size = value_set.size
    for register in model.registers:
        r = info.registers.add()
        _preamble(r.preamble, symbols, IdPrefix.REGISTER, register.name, register.annotations)
        _type_spec(register.type_spec, r.type_spec)
        r.size = register.size
    for digest in model.digests:
        d = info.digests.add()
        _preamble(d.preamble, symbols, IdPrefix.DIGEST, digest.name, [])
        _type_spec(digest.type_spec, d.type_spec)
    _add_type_info(info, model)
    return info


def to_text(info: p4info_pb2.P4Info) -> str:
    """P4Info in the text form p4c writes (`--p4runtime-files NAME.p4info.txtpb`)."""
    return HEADER + text_format.MessageToString(info)
