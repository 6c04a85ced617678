"""An oracle for P4Runtime Write and Read requests, written from the P4Runtime specification and the P4Info alone.

It shares no code with the server (no `EntityCodec`, nothing from `p4switch`), so a request the server's validator
wrongly accepts shows up as a disagreement. For every update it returns the set of codes the specification allows
(several rules can be broken at once, and an implementation may report any one of them) and keeps its own model of
the switch's state, in canonical form (shortest byte strings, don't-care fields omitted), to compare reads against.

Sources, cited by section of the P4Runtime specification (v1.4/1.5, docs/v1/P4Runtime-Spec.adoc):
- Bytestrings: a value fits when its bits past the top zeros are at most the bitwidth; padded strings are accepted;
  an empty string is refused; reads use the shortest form.
- TableEntry / Match Format: exact fields can never be omitted; lpm prefix 0 and ternary mask 0 ("don't care") must be
  omitted; lpm bits past the prefix and ternary value bits outside the mask are refused; a range must not be the
  full range and needs low <= high; priority > 0 exactly when the table has a ternary, range or optional field;
  `is_const` must be false in writes; `time_since_last_hit` must be unset; `idle_timeout_ns` only on tables with
  idle timeout; direct resources only on tables that have them. All INVALID_ARGUMENT.
- Action Specification: the action must be one of the table's; every parameter present once, ids known, values fit
  (INVALID_ARGUMENT); a scope violation is PERMISSION_DENIED.
- Default Entry: INSERT and DELETE are INVALID_ARGUMENT; no match, priority 0; MODIFY with no action resets it.
- Write semantics: INSERT of an existing key is ALREADY_EXISTS, MODIFY/DELETE of a missing one NOT_FOUND; a DELETE
  considers only the key (match, priority, is_default_action).
- PRE: multicast group id and clone session id 0 are INVALID_ARGUMENT in writes; (port, instance) pairs unique;
  the instance must fit the target's EgressInstance_t (v1model: `egress_rid` is bit<16>).

Where BMv2 (PI) answers a case with another code than the specification and this project follows BMv2, both codes
are allowed and the case is named in `BMV2_CODES` (documented in docs/p4runtime.md). Codes the conformance transcript
(tests/conformance/p4runtime/runtime_tables.jsonl) records are the ones expected here for the same cases.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

OK, INVALID, NOT_FOUND, EXISTS = "OK", "INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS"
OUT_OF_RANGE, DENIED, UNIMPLEMENTED, UNKNOWN = "OUT_OF_RANGE", "PERMISSION_DENIED", "UNIMPLEMENTED", "UNKNOWN"

# Cases where BMv2/PI's code differs from the specification's and the embedded server follows BMv2 (see the doc).
BMV2_CODES = {
    "clone session id 0": OUT_OF_RANGE,  # PI pre_clone_mgr.cpp validate_session_id: OUT_OF_RANGE for < 1
    "table-only action as default": INVALID,  # the spec says PERMISSION_DENIED
    "entity with no type": UNKNOWN,  # the spec names no code; PI: UNKNOWN "Incorrect entity type"
}
# Target limits (the spec leaves the maximum to the target): PI reserves multicast group ids from 2^15 for clone
# sessions and allows clone sessions 1..511; v1model's egress_rid is bit<16>.
MAX_GROUP_ID, MAX_SESSION_ID, MAX_INSTANCE = (1 << 15) - 1, 511, (1 << 16) - 1
# v1model standard_metadata.priority is bit<3>; PI answers UNIMPLEMENTED for any non-zero class of service.
MAX_CLASS_OF_SERVICE = 7

# Entity kinds the fuzzed P4Info has no object for (no counters, meters, registers, digests, value sets, action
# profiles, externs): every write of one names an id the P4Info lacks, or a wildcard a write cannot use, so it must
# be refused; the specification's code varies by kind (INVALID_ARGUMENT, NOT_FOUND, UNIMPLEMENTED, OUT_OF_RANGE).
ANY_ERROR = frozenset({INVALID, NOT_FOUND, EXISTS, OUT_OF_RANGE, DENIED, UNIMPLEMENTED, UNKNOWN,
                       "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED"})
UNMODELLED = ("counter_entry", "direct_counter_entry", "meter_entry", "direct_meter_entry", "register_entry",
              "digest_entry", "value_set_entry", "action_profile_member", "action_profile_group", "extern_entry")

NEEDS_PRIORITY = {p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE, p4info_pb2.MatchField.OPTIONAL}


class Refused(Exception):
    """An update the specification refuses; `codes` are the codes it allows for it."""

    def __init__(self, codes: Iterable[str], reason: str) -> None:
        super().__init__(reason)
        self.codes = frozenset(codes)
        self.reason = reason


def fits(data: bytes, bitwidth: int) -> int | None:
    """The unsigned value of a P4Runtime byte string, or None when it is empty or wider than `bitwidth` (Bytestrings)."""
    if not data:
        return None
    value = int.from_bytes(data, "big")
    return value if value.bit_length() <= bitwidth else None


def canonical(value: int) -> bytes:
    """The shortest big-endian form; one zero byte for 0."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


@dataclass(frozen=True)
class Field:
    id: int
    bitwidth: int
    kind: int


@dataclass(frozen=True)
class Table:
    id: int
    fields: tuple[Field, ...]
    actions: frozenset[int]
    table_only: frozenset[int]
    default_only: frozenset[int]
    initial_default: p4runtime_pb2.TableAction | None
    const_default: bool
    idle_timeout: bool
    direct_counter: bool
    direct_meter: bool
    const: bool
    size: int

    @property
    def needs_priority(self) -> bool:
        return any(f.kind in NEEDS_PRIORITY for f in self.fields)


@dataclass
class Schema:
    """What the P4Info says, nothing more."""

    tables: dict[int, Table] = field(default_factory=dict)
    params: dict[int, dict[int, int]] = field(default_factory=dict)  # action id -> param id -> bitwidth

    others: frozenset[str] = frozenset()  # P4Info sections with objects besides tables and actions

    def has_objects_for(self, kind: str) -> bool:
        section = {"counter_entry": "counters", "direct_counter_entry": "direct_counters", "meter_entry": "meters",
                   "direct_meter_entry": "direct_meters", "register_entry": "registers", "digest_entry": "digests",
                   "value_set_entry": "value_sets", "action_profile_member": "action_profiles",
                   "action_profile_group": "action_profiles", "extern_entry": "externs"}[kind]
        return section in self.others

    @classmethod
    def from_p4info(cls, p4info: p4info_pb2.P4Info) -> Schema:
        schema = cls()
        schema.others = frozenset(f.name for f, _ in p4info.ListFields()
                                  if f.name not in ("pkg_info", "tables", "actions", "type_info"))
        for a in p4info.actions:
            schema.params[a.preamble.id] = {p.id: p.bitwidth for p in a.params}
        counters = {c.direct_table_id for c in p4info.direct_counters}
        meters = {m.direct_table_id for m in p4info.direct_meters}
        for t in p4info.tables:
            initial = None
            if t.HasField("initial_default_action"):
                initial = p4runtime_pb2.TableAction()
                initial.action.action_id = t.initial_default_action.action_id
                for p in t.initial_default_action.arguments:  # (p4info 1.4: `arguments`, value bytes)
                    initial.action.params.add(param_id=p.param_id, value=canonical(int.from_bytes(p.value, "big")))
            scope = p4info_pb2.ActionRef
            schema.tables[t.preamble.id] = Table(
                id=t.preamble.id,
                fields=tuple(Field(f.id, f.bitwidth, f.match_type) for f in t.match_fields),
                actions=frozenset(r.id for r in t.action_refs),
                table_only=frozenset(r.id for r in t.action_refs if r.scope == scope.TABLE_ONLY),
                default_only=frozenset(r.id for r in t.action_refs if r.scope == scope.DEFAULT_ONLY),
                initial_default=initial,
                const_default=t.const_default_action_id != 0,
                idle_timeout=t.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL,
                direct_counter=t.preamble.id in counters,
                direct_meter=t.preamble.id in meters,
                const=t.is_const_table,
                size=t.size,
            )
        return schema


Key = tuple[object, ...]


@dataclass
class Model:
    """The switch's state as the specification says it must be after the accepted writes, in canonical form."""

    schema: Schema
    entries: dict[int, dict[Key, p4runtime_pb2.TableEntry]] = field(default_factory=dict)
    defaults: dict[int, p4runtime_pb2.TableEntry] = field(default_factory=dict)
    groups: dict[int, p4runtime_pb2.MulticastGroupEntry] = field(default_factory=dict)
    sessions: dict[int, p4runtime_pb2.CloneSessionEntry] = field(default_factory=dict)
    # for an update the spec allows both to accept and to refuse: what accepting it changes (see `settle`)
    if_accepted: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        for table in self.schema.tables.values():
            self.entries.setdefault(table.id, {})
            self.defaults.setdefault(table.id, self._initial_default(table))

    @staticmethod
    def _initial_default(table: Table) -> p4runtime_pb2.TableEntry:
        te = p4runtime_pb2.TableEntry(table_id=table.id, is_default_action=True)
        if table.initial_default is not None:
            te.action.CopyFrom(table.initial_default)
        return te

    # -- checks ---------------------------------------------------------------------------------------------------
    def _key(self, table: Table, te: p4runtime_pb2.TableEntry) -> tuple[Key, list[p4runtime_pb2.FieldMatch]]:
        """The entry's identity (canonical match per P4Info field, and priority) and its canonical match fields."""
        given: dict[int, p4runtime_pb2.FieldMatch] = {}
        known = {f.id for f in table.fields}
        for fm in te.match:
            if fm.field_id not in known:
                raise Refused({INVALID}, f"unknown match field id {fm.field_id}")
            if fm.field_id in given:
                raise Refused({INVALID}, f"match field {fm.field_id} given twice")
            given[fm.field_id] = fm
        key: list[object] = []
        out: list[p4runtime_pb2.FieldMatch] = []
        for f in table.fields:
            fm = given.get(f.id)
            if fm is None:
                if f.kind == p4info_pb2.MatchField.EXACT:
                    raise Refused({INVALID}, f"exact field {f.id} omitted")
                key.append(None)
                continue
            part = self._field(f, fm)
            key.append(part)
            out.append(_field_proto(f, part))
        if table.needs_priority:
            if te.priority <= 0:
                raise Refused({INVALID}, "priority must be > 0 for a ternary/range/optional table")
        elif te.priority != 0:
            raise Refused({INVALID}, "priority must be 0 for a table without ternary/range/optional fields")
        key.append(te.priority)
        return tuple(key), out

    @staticmethod
    def _field(f: Field, fm: p4runtime_pb2.FieldMatch) -> tuple[int, ...]:
        kind = fm.WhichOneof("field_match_type")
        mf = p4info_pb2.MatchField
        expected = {mf.EXACT: "exact", mf.LPM: "lpm", mf.TERNARY: "ternary", mf.RANGE: "range",
                    mf.OPTIONAL: "optional"}.get(f.kind)
        if kind != expected:
            raise Refused({INVALID}, f"field {f.id}: {kind} given for a {expected} field")
        if kind in ("exact", "optional"):
            value = fits(getattr(fm, kind).value, f.bitwidth)
            if value is None:
                raise Refused({INVALID}, f"field {f.id}: bad byte string")
            return (value,)
        if kind == "lpm":
            value, plen = fits(fm.lpm.value, f.bitwidth), fm.lpm.prefix_len
            if value is None:
                raise Refused({INVALID}, f"field {f.id}: bad byte string")
            if not 0 < plen <= f.bitwidth:
                raise Refused({INVALID}, f"field {f.id}: prefix length {plen} (0 is a don't care, omit it)")
            if value & ((1 << (f.bitwidth - plen)) - 1):
                raise Refused({INVALID}, f"field {f.id}: bits past the prefix")
            return (value, plen)
        if kind == "ternary":
            value, mask = fits(fm.ternary.value, f.bitwidth), fits(fm.ternary.mask, f.bitwidth)
            if value is None or mask is None:
                raise Refused({INVALID}, f"field {f.id}: bad byte string")
            if mask == 0:
                raise Refused({INVALID}, f"field {f.id}: zero mask is a don't care, omit it")
            if value & mask != value:
                raise Refused({INVALID}, f"field {f.id}: value bits outside the mask")
            return (value, mask)
        low, high = fits(fm.range.low, f.bitwidth), fits(fm.range.high, f.bitwidth)
        if low is None or high is None:
            raise Refused({INVALID}, f"field {f.id}: bad byte string")
        if low > high:
            raise Refused({INVALID}, f"field {f.id}: low > high")
        if low == 0 and high == (1 << f.bitwidth) - 1:
            raise Refused({INVALID}, f"field {f.id}: the full range is a don't care, omit it")
        return (low, high)

    def _action(self, table: Table, te: p4runtime_pb2.TableEntry, *, default: bool) -> p4runtime_pb2.TableAction:
        kind = te.action.WhichOneof("type")
        if kind != "action":
            raise Refused({INVALID}, f"{kind} for a direct table")
        action = te.action.action
        if action.action_id not in table.actions:
            raise Refused({INVALID}, f"action {action.action_id} is not one of the table's")
        if default and action.action_id in table.table_only:
            raise Refused({DENIED, BMV2_CODES["table-only action as default"]}, "table-only action as default")
        if not default and action.action_id in table.default_only:
            raise Refused({DENIED, INVALID}, "default-only action in an entry")
        widths = self.schema.params[action.action_id]
        values: dict[int, int] = {}
        for p in action.params:
            if p.param_id not in widths:
                raise Refused({INVALID}, f"unknown parameter {p.param_id}")
            if p.param_id in values:
                raise Refused({INVALID}, f"parameter {p.param_id} given twice")
            value = fits(p.value, widths[p.param_id])
            if value is None:
                raise Refused({INVALID}, f"parameter {p.param_id}: bad byte string")
            values[p.param_id] = value
        if set(values) != set(widths):
            raise Refused({INVALID}, "missing parameter")
        out = p4runtime_pb2.TableAction()
        out.action.action_id = action.action_id
        for pid in widths:  # P4Info order
            out.action.params.add(param_id=pid, value=canonical(values[pid]))
        return out

    def _extras(self, table: Table, te: p4runtime_pb2.TableEntry) -> None:
        """The non-key, non-action fields a write must get right."""
        if te.is_const:
            raise Refused({INVALID}, "is_const set in a write")
        if te.HasField("time_since_last_hit"):
            raise Refused({INVALID}, "time_since_last_hit set in a write")
        if te.idle_timeout_ns != 0 and (te.is_default_action or not table.idle_timeout or te.idle_timeout_ns < 0):
            raise Refused({INVALID}, "idle_timeout_ns on a table (or default entry) without idle timeout")
        if te.HasField("counter_data") and (te.is_default_action or not table.direct_counter):
            raise Refused({INVALID}, "counter_data for a table without a direct counter")
        if (te.HasField("meter_config") or te.HasField("meter_counter_data")) and (
                te.is_default_action or not table.direct_meter):
            raise Refused({INVALID}, "meter_config/meter_counter_data for a table without a direct meter")

    # -- writes ---------------------------------------------------------------------------------------------------
    def update(self, update: p4runtime_pb2.Update) -> frozenset[str]:
        """The codes the specification allows for `update` against the current state; applies it when that is OK."""
        try:
            self._apply(update)
        except Refused as refused:
            return refused.codes
        return frozenset({OK})

    def _apply(self, update: p4runtime_pb2.Update) -> None:
        if update.type not in (update.INSERT, update.MODIFY, update.DELETE):
            raise Refused({INVALID}, f"update type {update.type}")
        kind = update.entity.WhichOneof("entity")
        if kind == "table_entry":
            self._table_entry(update.type, update.entity.table_entry)
        elif kind == "packet_replication_engine_entry":
            pre = update.entity.packet_replication_engine_entry
            which = pre.WhichOneof("type")
            if which == "multicast_group_entry":
                self._group(update.type, pre.multicast_group_entry)
            elif which == "clone_session_entry":
                self._session(update.type, pre.clone_session_entry)
            else:
                raise Refused({INVALID}, "empty packet_replication_engine_entry")
        elif kind is None:
            raise Refused({INVALID, BMV2_CODES["entity with no type"]}, "entity with no type")
        else:
            assert kind in UNMODELLED and not self.schema.has_objects_for(kind), kind
            raise Refused(ANY_ERROR, f"{kind} with no such object in the P4Info")

    def _table_entry(self, kind: int, te: p4runtime_pb2.TableEntry) -> None:
        table = self.schema.tables.get(te.table_id)
        if table is None:  # the transcript: BMv2 answers INVALID_ARGUMENT
            raise Refused({INVALID}, f"unknown table id {te.table_id}")
        if te.is_default_action:
            self._default(kind, table, te)
            return
        if table.const:
            raise Refused({DENIED}, "const table")
        key, match = self._key(table, te)
        existing = self.entries[table.id].get(key)
        if kind == p4runtime_pb2.Update.DELETE:  # only the key counts; a server may still refuse nonsense fields
            if te.is_const:  # ... except is_const, refused in "any INSERT, MODIFY, or DELETE"
                raise Refused({INVALID} | ({NOT_FOUND} if existing is None else set()), "is_const in a DELETE")
            codes: set[str] = set()
            try:
                self._extras(table, te)
            except Refused as refused:
                codes |= refused.codes
            if existing is None:
                raise Refused(codes | {NOT_FOUND}, "delete of a missing entry")
            if codes:  # refusing is allowed, accepting too: then the entry is gone
                self.if_accepted = lambda: self.entries[table.id].pop(key, None) and None
                raise Refused(codes | {OK}, "delete with nonsense non-key fields")
            del self.entries[table.id][key]
            return
        codes = set()
        action: p4runtime_pb2.TableAction | None = None
        try:
            self._extras(table, te)
            if te.HasField("action"):
                action = self._action(table, te, default=False)
            elif kind == p4runtime_pb2.Update.INSERT:
                raise Refused({INVALID}, "INSERT without an action")
        except Refused as refused:
            codes |= refused.codes
        if kind == p4runtime_pb2.Update.INSERT and existing is not None:
            codes.add(EXISTS)
        if kind == p4runtime_pb2.Update.MODIFY and existing is None:
            codes.add(NOT_FOUND)
        if codes:
            raise Refused(codes, "refused")
        entry = p4runtime_pb2.TableEntry(table_id=table.id, priority=te.priority, match=match,
                                         controller_metadata=te.controller_metadata, metadata=te.metadata)
        if kind == p4runtime_pb2.Update.INSERT and len(self.entries[table.id]) >= table.size > 0:
            # "must return RESOURCE_EXHAUSTED when [it] cannot be inserted because of a size limitation"; a target
            # may also hold more than the P4Info size: both allowed
            assert action is not None
            entry.action.CopyFrom(action)
            self.if_accepted = lambda: self.entries[table.id].__setitem__(key, entry)
            raise Refused({OK, "RESOURCE_EXHAUSTED"}, "table full")
        if kind == p4runtime_pb2.Update.MODIFY and action is None:
            return  # Action Specification: the action stays; with no direct resource given, the MODIFY is a no-op
        assert action is not None
        entry.action.CopyFrom(action)
        self.entries[table.id][key] = entry

    def _default(self, kind: int, table: Table, te: p4runtime_pb2.TableEntry) -> None:
        codes: set[str] = set()
        if te.match or te.priority != 0:
            codes.add(INVALID)
        if kind != p4runtime_pb2.Update.MODIFY:
            codes.add(INVALID)
        action = None
        try:
            self._extras(table, te)
            if te.HasField("action"):
                action = self._action(table, te, default=True)
        except Refused as refused:
            codes |= refused.codes
        if table.const_default:
            codes.add(DENIED)
        if codes:
            raise Refused(codes, "default entry write refused")
        entry = self._initial_default(table)
        if action is not None:
            entry.action.CopyFrom(action)
        self.defaults[table.id] = entry

    @staticmethod
    def _replicas(replicas: Iterable[p4runtime_pb2.Replica]) -> list[p4runtime_pb2.Replica]:
        out: list[p4runtime_pb2.Replica] = []
        seen: set[tuple[int, int]] = set()
        for r in replicas:
            if r.WhichOneof("port_kind") == "port":
                port = fits(r.port, 32)
                if port is None:  # Bytestrings: OUT_OF_RANGE; PI and the transcript's byte strings: INVALID_ARGUMENT
                    raise Refused({INVALID, OUT_OF_RANGE}, "bad replica port byte string")
                canon = p4runtime_pb2.Replica(port=canonical(port), instance=r.instance)
            else:
                port = r.egress_port
                canon = p4runtime_pb2.Replica(egress_port=port, instance=r.instance)
            if r.instance > MAX_INSTANCE:
                raise Refused({INVALID}, f"instance {r.instance} does not fit v1model's bit<16> egress_rid")
            if (port, r.instance) in seen:
                raise Refused({INVALID}, "duplicate (port, instance)")
            seen.add((port, r.instance))
            out.append(canon)
        return out

    def _replicated(self, kind: int, store: dict[int, Any], key: int, replicas_in: Any, codes: set[str],
                    what: str) -> list[p4runtime_pb2.Replica] | None:
        """What group and clone session writes share: DELETE, the replica list and INSERT/MODIFY against what
        exists, refused with every code that applies (`codes`: the entity's own). The checked replicas, or None
        once a DELETE is done."""
        existing = store.get(key)
        if kind == p4runtime_pb2.Update.DELETE:
            if existing is None:
                raise Refused({NOT_FOUND}, f"delete of a missing {what}")
            del store[key]
            return None
        replicas: list[p4runtime_pb2.Replica] = []
        try:
            replicas = self._replicas(replicas_in)
        except Refused as refused:
            codes = codes | refused.codes
        if kind == p4runtime_pb2.Update.INSERT and existing is not None:
            codes = codes | {EXISTS}
        if kind == p4runtime_pb2.Update.MODIFY and existing is None:
            codes = codes | {NOT_FOUND}
        if codes:
            raise Refused(codes, f"{what} write refused")
        return replicas

    def _group(self, kind: int, g: p4runtime_pb2.MulticastGroupEntry) -> None:
        if g.multicast_group_id == 0:
            raise Refused({INVALID}, "multicast group id 0")
        if g.multicast_group_id > MAX_GROUP_ID:
            raise Refused({OUT_OF_RANGE, INVALID}, "multicast group id past the target's range")
        replicas = self._replicated(kind, self.groups, g.multicast_group_id, g.replicas, set(), "group")
        if replicas is not None:
            self.groups[g.multicast_group_id] = p4runtime_pb2.MulticastGroupEntry(
                multicast_group_id=g.multicast_group_id, replicas=replicas, metadata=g.metadata)

    def _session(self, kind: int, c: p4runtime_pb2.CloneSessionEntry) -> None:
        if c.session_id == 0:
            raise Refused({INVALID, BMV2_CODES["clone session id 0"]}, "clone session id 0")
        if c.session_id > MAX_SESSION_ID:
            raise Refused({OUT_OF_RANGE, INVALID}, "clone session id past the target's range")
        own: set[str] = set()
        if kind != p4runtime_pb2.Update.DELETE:
            if c.class_of_service > MAX_CLASS_OF_SERVICE:
                own |= {INVALID, UNIMPLEMENTED}
            if c.packet_length_bytes < 0:
                own |= {INVALID, OUT_OF_RANGE}
        replicas = self._replicated(kind, self.sessions, c.session_id, c.replicas, own, "clone session")
        if replicas is not None:
            self.sessions[c.session_id] = p4runtime_pb2.CloneSessionEntry(
                session_id=c.session_id, replicas=replicas, class_of_service=c.class_of_service,
                packet_length_bytes=c.packet_length_bytes)

    # -- reads ----------------------------------------------------------------------------------------------------
    def read_table(self, req: p4runtime_pb2.TableEntry) -> list[p4runtime_pb2.Entity]:
        """What a Read of `req` returns (Wildcard Reads: table, match, action id, priority, metadata filters)."""
        if req.table_id == 0:
            tables = [self.schema.tables[t] for t in sorted(self.schema.tables)]
        else:
            table = self.schema.tables.get(req.table_id)
            if table is None:
                raise Refused({INVALID, NOT_FOUND}, f"unknown table id {req.table_id}")
            tables = [table]
        if req.HasField("time_since_last_hit") and not all(t.idle_timeout for t in tables):
            raise Refused({INVALID}, "time_since_last_hit on a table without idle timeout")
        out = []
        for table in tables:
            if req.is_default_action:
                out.append(p4runtime_pb2.Entity(table_entry=self.defaults[table.id]))
                continue
            wanted = None
            if req.match:
                wanted, _ = self._key(table, req)
            for key, entry in self.entries[table.id].items():
                if wanted is not None and key != wanted:
                    continue
                if req.priority and entry.priority != req.priority:
                    continue
                if req.HasField("action") and req.action.action.action_id and \
                        entry.action.action.action_id != req.action.action.action_id:
                    continue
                if req.controller_metadata and entry.controller_metadata != req.controller_metadata:
                    continue
                if req.metadata and entry.metadata != req.metadata:
                    continue
                out.append(p4runtime_pb2.Entity(table_entry=entry))
        return out

    def read_groups(self, group_id: int) -> list[p4runtime_pb2.Entity]:
        ids = [group_id] if group_id else sorted(self.groups)
        if any(i not in self.groups for i in ids):
            raise Refused({NOT_FOUND}, f"no multicast group {group_id}")
        return [p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
            multicast_group_entry=self.groups[i])) for i in ids]

    def read_sessions(self, session_id: int) -> list[p4runtime_pb2.Entity]:
        ids = [session_id] if session_id else sorted(self.sessions)
        if any(i not in self.sessions for i in ids):
            raise Refused({NOT_FOUND}, f"no clone session {session_id}")
        return [p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
            clone_session_entry=self.sessions[i])) for i in ids]

    def everything(self) -> list[p4runtime_pb2.Entity]:
        """Every table entry, every default entry, group and session, for a whole-state comparison."""
        out = self.read_table(p4runtime_pb2.TableEntry())
        out += [p4runtime_pb2.Entity(table_entry=self.defaults[t]) for t in sorted(self.defaults)]
        return out + self.read_groups(0) + self.read_sessions(0)

    def settle(self, code: str) -> None:
        """After an update the spec lets the server accept or refuse, follow what the server did."""
        pending, self.if_accepted = self.if_accepted, None
        if pending is not None and code == OK:
            pending()


def _field_proto(f: Field, part: tuple[int, ...]) -> p4runtime_pb2.FieldMatch:
    fm = p4runtime_pb2.FieldMatch(field_id=f.id)
    mf = p4info_pb2.MatchField
    if f.kind == mf.EXACT:
        fm.exact.value = canonical(part[0])
    elif f.kind == mf.OPTIONAL:
        fm.optional.value = canonical(part[0])
    elif f.kind == mf.LPM:
        fm.lpm.value, fm.lpm.prefix_len = canonical(part[0]), part[1]
    elif f.kind == mf.TERNARY:
        fm.ternary.value, fm.ternary.mask = canonical(part[0]), canonical(part[1])
    else:
        fm.range.low, fm.range.high = canonical(part[0]), canonical(part[1])
    return fm


def normalized(entities: Iterable[p4runtime_pb2.Entity]) -> list[bytes]:
    """Entities as sorted deterministic bytes, match fields by id and replicas by (instance, port): the spec leaves
    the order of entities, of a group's replicas and of match fields open, nothing else."""
    out = []
    for e in entities:
        e = copy.deepcopy(e)
        if e.HasField("table_entry"):
            fields = sorted(e.table_entry.match, key=lambda m: m.field_id)
            del e.table_entry.match[:]
            e.table_entry.match.extend(fields)
        elif e.HasField("packet_replication_engine_entry"):
            pre = e.packet_replication_engine_entry
            holder = pre.multicast_group_entry if pre.HasField("multicast_group_entry") else pre.clone_session_entry
            replicas = sorted(holder.replicas, key=lambda r: (r.instance, r.egress_port, r.port))
            del holder.replicas[:]
            holder.replicas.extend(replicas)
        out.append(e.SerializeToString(deterministic=True))
    return sorted(out)
