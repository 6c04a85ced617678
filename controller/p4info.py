"""Name resolution and typed entity builders over one switch's P4Info.

Everything is looked up by name (fully qualified or alias) and encoded with the bit widths P4Info declares, so
the controller never depends on ids or list positions: p4c and the embedded compiler agree on names, and a program
change that moves ids needs no controller change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.encoding import Value, canonical, decode_int, encode, encode_int, parse_value, prefix_mask
from controller.exceptions import EncodingError, P4InfoError

MatchSpec = Value | tuple[Value, Value] | tuple[Value, int]

_MATCH_TYPE_NAMES = {v: k for k, v in p4info_pb2.MatchField.MatchType.items()}


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Read P4Info in text format (`.txt`, `.txtpb`) or binary (`.bin`, `.pb`)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise P4InfoError(f"cannot read P4Info {path}: {exc.strerror}") from None
    info = p4info_pb2.P4Info()
    try:
        if Path(path).suffix in (".bin", ".pb"):
            info.ParseFromString(data)
        else:
            text_format.Parse(data.decode(), info)
    except (text_format.ParseError, DecodeError, UnicodeDecodeError) as exc:
        raise P4InfoError(f"{path}: not a P4Info file: {str(exc).splitlines()[0]}") from None
    return info


class _Named:
    """Index of one kind of P4Info object by id, full name and alias."""

    def __init__(self, kind: str, objects: Iterable[Any]) -> None:
        self.kind = kind
        self.by_name: dict[str, Any] = {}
        self.by_id: dict[int, Any] = {}
        for obj in objects:
            pre = obj.preamble
            self.by_id[pre.id] = obj
            self.by_name[pre.name] = obj
            if pre.alias:
                self.by_name.setdefault(pre.alias, obj)

    def get(self, name: str) -> Any:
        try:
            return self.by_name[name]
        except KeyError:
            known = sorted(n for n, o in self.by_name.items() if o.preamble.name == n)
            raise P4InfoError(f"no {self.kind} named {name!r} in P4Info (known: {', '.join(known) or 'none'})") from None

    def by(self, obj_id: int) -> Any:
        try:
            return self.by_id[obj_id]
        except KeyError:
            raise P4InfoError(f"no {self.kind} with id {obj_id} in P4Info") from None

    def __contains__(self, name: str) -> bool:
        return name in self.by_name


@dataclass(frozen=True)
class DecodedEntry:
    """A table entry in names and ints: what tests and `show` compare against the intended state."""

    table: str
    match: tuple[tuple[str, tuple[int, ...]], ...]
    action: str
    params: tuple[tuple[str, int], ...]
    priority: int = 0
    is_default: bool = False


class P4InfoHelper:
    """Typed builders and decoders for one P4Info; one instance per pipeline (not global)."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.tables = _Named("table", p4info.tables)
        self.actions = _Named("action", p4info.actions)
        self.counters = _Named("counter", p4info.counters)
        self.direct_counters = _Named("direct counter", p4info.direct_counters)
        self.meters = _Named("meter", p4info.meters)
        self.registers = _Named("register", p4info.registers)
        self.digests = _Named("digest", p4info.digests)
        self.packet_metadata = _Named("controller packet metadata", p4info.controller_packet_metadata)

    # -- names ------------------------------------------------------------------------------------------------
    def table_id(self, name: str) -> int:
        return int(self.tables.get(name).preamble.id)

    def action_id(self, name: str) -> int:
        return int(self.actions.get(name).preamble.id)

    def has_table(self, name: str) -> bool:
        return name in self.tables

    # -- actions and table entries ----------------------------------------------------------------------------
    def action(self, name: str, params: Mapping[str, Value] | None = None) -> p4runtime_pb2.Action:
        info = self.actions.get(name)
        params = dict(params or {})
        msg = p4runtime_pb2.Action(action_id=info.preamble.id)
        declared = {p.name: p for p in info.params}
        unknown = set(params) - set(declared)
        if unknown:
            raise P4InfoError(f"action {info.preamble.name} has no parameter {', '.join(sorted(unknown))} "
                              f"(has: {', '.join(declared) or 'none'})")
        for p in info.params:
            if p.name not in params:
                raise P4InfoError(f"action {info.preamble.name}: missing parameter {p.name}")
            try:
                value = encode(params[p.name], p.bitwidth)
            except EncodingError as exc:
                raise EncodingError(f"action {info.preamble.name} parameter {p.name}: {exc}") from None
            msg.params.add(param_id=p.id, value=value)
        return msg

    def field_match(self, table: Any, field_name: str, spec: MatchSpec) -> p4runtime_pb2.FieldMatch | None:
        """One FieldMatch, or None when the spec is a wildcard (omitted in P4Runtime)."""
        fields = {f.name: f for f in table.match_fields}
        if field_name not in fields:
            raise P4InfoError(f"table {table.preamble.name} has no match field {field_name!r} "
                              f"(has: {', '.join(fields)})")
        f = fields[field_name]
        width = f.bitwidth
        fm = p4runtime_pb2.FieldMatch(field_id=f.id)
        kind = f.match_type
        try:
            if kind == p4info_pb2.MatchField.EXACT:
                fm.exact.value = encode(_scalar(spec, field_name), width)
            elif kind == p4info_pb2.MatchField.LPM:
                value, plen = _lpm(spec, width)
                if plen == 0:
                    return None
                fm.lpm.value = encode_int(value & prefix_mask(plen, width), width)
                fm.lpm.prefix_len = plen
            elif kind == p4info_pb2.MatchField.TERNARY:
                value, mask = _pair(spec, width, default_second=(1 << width) - 1)
                if mask == 0:
                    return None
                fm.ternary.value = encode_int(value & mask, width)
                fm.ternary.mask = encode_int(mask, width)
            elif kind == p4info_pb2.MatchField.RANGE:
                low, high = _pair(spec, width, default_second=None)
                if low == 0 and high == (1 << width) - 1:
                    return None
                fm.range.low = encode_int(low, width)
                fm.range.high = encode_int(high, width)
            elif kind == p4info_pb2.MatchField.OPTIONAL:
                if spec is None:
                    return None
                fm.optional.value = encode(_scalar(spec, field_name), width)
            else:
                raise P4InfoError(f"match kind {_MATCH_TYPE_NAMES.get(kind, kind)} of {field_name} not supported")
        except EncodingError as exc:
            raise EncodingError(f"table {table.preamble.name} field {field_name}: {exc}") from None
        return fm

    def table_entry(self, table: str, match: Mapping[str, MatchSpec] | None = None, action: str | None = None,
                    params: Mapping[str, Value] | None = None, priority: int = 0,
                    default: bool = False) -> p4runtime_pb2.TableEntry:
        info = self.tables.get(table)
        entry = p4runtime_pb2.TableEntry(table_id=info.preamble.id, priority=priority, is_default_action=default)
        for name, spec in (match or {}).items():
            fm = self.field_match(info, name, spec)
            if fm is not None:
                entry.match.append(fm)
        if action is not None:
            allowed = {ref.id for ref in info.action_refs}
            if self.action_id(action) not in allowed:
                raise P4InfoError(f"action {action} is not an action of table {info.preamble.name}")
            entry.action.action.CopyFrom(self.action(action, params))
        if self.needs_priority(table) and not default and priority <= 0:
            raise P4InfoError(f"table {info.preamble.name} has ternary/range/optional keys: give a priority > 0")
        return entry

    def needs_priority(self, table: str) -> bool:
        kinds = {f.match_type for f in self.tables.get(table).match_fields}
        return bool(kinds & {p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE,
                             p4info_pb2.MatchField.OPTIONAL})

    def decode_table_entry(self, entry: p4runtime_pb2.TableEntry) -> DecodedEntry:
        info = self.tables.by(entry.table_id)
        fields = {f.id: f for f in info.match_fields}
        match: list[tuple[str, tuple[int, ...]]] = []
        for fm in entry.match:
            name = fields[fm.field_id].name if fm.field_id in fields else str(fm.field_id)
            which = fm.WhichOneof("field_match_type")
            if which == "exact":
                vals: tuple[int, ...] = (decode_int(fm.exact.value),)
            elif which == "lpm":
                vals = (decode_int(fm.lpm.value), fm.lpm.prefix_len)
            elif which == "ternary":
                vals = (decode_int(fm.ternary.value), decode_int(fm.ternary.mask))
            elif which == "range":
                vals = (decode_int(fm.range.low), decode_int(fm.range.high))
            elif which == "optional":
                vals = (decode_int(fm.optional.value),)
            else:
                vals = ()
            match.append((name, vals))
        action_name, params = "", ()  # type: tuple[str, tuple[tuple[str, int], ...]]
        if entry.action.WhichOneof("type") == "action":
            a = self.actions.by(entry.action.action.action_id)
            pnames = {p.id: p.name for p in a.params}
            action_name = a.preamble.name
            params = tuple((pnames.get(p.param_id, str(p.param_id)), decode_int(p.value))
                           for p in entry.action.action.params)
        return DecodedEntry(info.preamble.name, tuple(sorted(match)), action_name, tuple(sorted(params)),
                            entry.priority, entry.is_default_action)

    # -- other entities ---------------------------------------------------------------------------------------
    def counter_entry(self, name: str, index: int | None = None) -> p4runtime_pb2.CounterEntry:
        info = self.counters.get(name)
        entry = p4runtime_pb2.CounterEntry(counter_id=info.preamble.id)
        if index is not None:
            if not 0 <= index < info.size:
                raise P4InfoError(f"counter {info.preamble.name} index {index} outside 0..{info.size - 1}")
            entry.index.index = index
        return entry

    def register_entry(self, name: str, index: int | None = None) -> p4runtime_pb2.RegisterEntry:
        info = self.registers.get(name)
        entry = p4runtime_pb2.RegisterEntry(register_id=info.preamble.id)
        if index is not None:
            if not 0 <= index < info.size:
                raise P4InfoError(f"register {info.preamble.name} index {index} outside 0..{info.size - 1}")
            entry.index.index = index
        return entry

    def digest_entry(self, name: str, max_timeout_ns: int = 0, max_list_size: int = 1,
                     ack_timeout_ns: int = 1_000_000_000) -> p4runtime_pb2.DigestEntry:
        info = self.digests.get(name)
        entry = p4runtime_pb2.DigestEntry(digest_id=info.preamble.id)
        entry.config.max_timeout_ns = max_timeout_ns
        entry.config.max_list_size = max_list_size
        entry.config.ack_timeout_ns = ack_timeout_ns
        return entry

    def digest_name(self, digest_id: int) -> str:
        return str(self.digests.by(digest_id).preamble.name)

    def digest_field_names(self, digest_id: int) -> list[str]:
        """Member names of a struct digest (from its type_info), or positional names when unknown."""
        info = self.digests.by(digest_id)
        spec = info.type_spec
        if spec.HasField("struct"):
            struct = self.p4info.type_info.structs.get(spec.struct.name)
            if struct is not None:
                return [m.name for m in struct.members]
        return []

    def packet_out(self, payload: bytes, metadata: Mapping[str, Value] | None = None) -> p4runtime_pb2.PacketOut:
        info = self.packet_metadata.get("packet_out")
        msg = p4runtime_pb2.PacketOut(payload=payload)
        given = dict(metadata or {})
        declared = {m.name: m for m in info.metadata}
        unknown = set(given) - set(declared)
        if unknown:
            raise P4InfoError(f"packet_out has no metadata {', '.join(sorted(unknown))} (has: {', '.join(declared)})")
        for name, value in given.items():
            m = declared[name]
            msg.metadata.add(metadata_id=m.id, value=encode(value, m.bitwidth))
        return msg

    def decode_packet_in(self, packet: p4runtime_pb2.PacketIn) -> dict[str, int]:
        """Packet-in metadata by name, resolved through P4Info ids (never positions)."""
        if "packet_in" not in self.packet_metadata:
            return {}
        names = {m.id: m.name for m in self.packet_metadata.get("packet_in").metadata}
        return {names.get(m.metadata_id, str(m.metadata_id)): decode_int(m.value) for m in packet.metadata}


def multicast_group(group_id: int, replicas: Iterable[tuple[int, int]]) -> p4runtime_pb2.PacketReplicationEngineEntry:
    """A multicast group from (port, instance) pairs; sets both `port` bytes and the deprecated `egress_port`."""
    if group_id <= 0:
        raise EncodingError(f"multicast group id must be > 0, got {group_id}")
    entry = p4runtime_pb2.PacketReplicationEngineEntry()
    entry.multicast_group_entry.multicast_group_id = group_id
    for port, instance in replicas:
        entry.multicast_group_entry.replicas.add(egress_port=port, instance=instance)
    return entry


def clone_session(session_id: int, replicas: Iterable[tuple[int, int]], class_of_service: int = 0,
                  packet_length_bytes: int = 0) -> p4runtime_pb2.PacketReplicationEngineEntry:
    if session_id <= 0:
        raise EncodingError(f"clone session id must be > 0, got {session_id}")
    entry = p4runtime_pb2.PacketReplicationEngineEntry()
    cs = entry.clone_session_entry
    cs.session_id = session_id
    cs.class_of_service = class_of_service
    cs.packet_length_bytes = packet_length_bytes
    for port, instance in replicas:
        cs.replicas.add(egress_port=port, instance=instance)
    return entry


def replica_port(replica: p4runtime_pb2.Replica) -> int:
    """A replica's port whether it was sent as `port` bytes or the deprecated `egress_port`."""
    if replica.WhichOneof("port_kind") == "port":
        return decode_int(replica.port)
    return int(replica.egress_port)


def _scalar(spec: Any, name: str) -> Value:
    if isinstance(spec, tuple):
        raise EncodingError(f"field {name} takes one value, got {spec!r}")
    return spec


def _lpm(spec: Any, width: int) -> tuple[int, int]:
    if isinstance(spec, tuple):
        return parse_value(spec[0], width), int(spec[1])
    if isinstance(spec, str) and "/" in spec:
        addr, plen = spec.rsplit("/", 1)
        return parse_value(addr, width), int(plen)
    return parse_value(spec, width), width


def _pair(spec: Any, width: int, default_second: int | None) -> tuple[int, int]:
    if isinstance(spec, tuple):
        return parse_value(spec[0], width), parse_value(spec[1], width)
    if isinstance(spec, str) and "&&&" in spec:
        a, b = spec.split("&&&", 1)
        return parse_value(a, width), parse_value(b, width)
    if isinstance(spec, str) and ".." in spec and spec.count(".") == 2:
        a, b = spec.split("..", 1)
        return parse_value(a, width), parse_value(b, width)
    value = parse_value(spec, width)
    if default_second is None:
        return value, value
    return value, default_second


__all__ = ["DecodedEntry", "P4InfoHelper", "canonical", "clone_session", "load_p4info", "multicast_group",
           "replica_port"]
