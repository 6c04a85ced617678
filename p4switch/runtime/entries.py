"""P4Runtime entities <-> `RuntimeState`, validated the way simple_switch_grpc (PI) validates them.

Every check happens before anything changes, so a refused update leaves the state exactly as it was. Failures raise
`RuntimeStateError` carrying the canonical google.rpc code PI answers with (INVALID_ARGUMENT for unknown ids, bad
byte strings and malformed matches, ALREADY_EXISTS / NOT_FOUND for entries, PERMISSION_DENIED for const tables and
const default actions, UNIMPLEMENTED for what BMv2 does not support either). Reads return canonical byte strings.

Used by the P4Runtime server and by the file-mode loader `load_write_request` (`p4ina switch --entries`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from p4switch.runtime.profiles import GROUP_ACTION
from p4switch.runtime.state import (
    EXACT,
    LPM,
    OPTIONAL,
    RANGE,
    TERNARY,
    CloneSession,
    DigestConfig,
    Entry,
    MatchFieldInfo,
    MeterCell,
    MeterConfig,
    MulticastGroup,
    Replica,
    RuntimeState,
    RuntimeStateError,
    TableState,
)

_log = logging.getLogger("p4switch.runtime")

INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY
DELETE = p4runtime_pb2.Update.DELETE

Match = tuple[tuple[int, int], ...]

# PI's limits (pre_mc_mgr.h, pre_clone_mgr.h): group ids from 2^15 back clone sessions; sessions are 1..511
FIRST_RESERVED_GROUP_ID = 1 << 15
MIN_CLONE_SESSION_ID, MAX_CLONE_SESSION_ID = 1, 512
# v1model's standard_metadata: egress_rid is bit<16> (a replica's instance), priority bit<3> (a class of service);
# the P4Runtime spec (PRE) refuses values the target's types cannot hold with INVALID_ARGUMENT
MAX_INSTANCE, MAX_CLASS_OF_SERVICE = (1 << 16) - 1, 7


def _invalid(message: str) -> RuntimeStateError:
    return RuntimeStateError(code_pb2.INVALID_ARGUMENT, message)


# ------------------------------------------------------------------------------------------------- byte strings


def decode_bytes(data: bytes, bitwidth: int, what: str) -> int:
    """A P4Runtime byte string as an unsigned int; padded strings are accepted as long as the value fits."""
    if not data:
        raise _invalid(f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if value.bit_length() > bitwidth:
        raise _invalid(f"{what}: value {data.hex()} does not fit in {bitwidth} bits")
    return value


def encode_bytes(value: int) -> bytes:
    """Canonical form: the shortest big-endian string, one zero byte for 0."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_padded(value: int, bitwidth: int) -> bytes:
    return value.to_bytes(max(1, (bitwidth + 7) // 8), "big")


# ------------------------------------------------------------------------------------------------------ codec


class EntityCodec:
    """Validates and applies P4Runtime `Entity` writes to one `RuntimeState`, and answers reads from it."""

    def __init__(self, state: RuntimeState) -> None:
        self.state = state
        self.p4info = state.p4info
        # P4Info lookups cached once: protobuf message access is slow in the pure-Python runtime
        self._params = {aid: tuple((p.id, p.name, p.bitwidth) for p in a.params) for aid, a in state.actions.items()}
        self._action_names = {aid: a.preamble.name for aid, a in state.actions.items()}
        self._field_ids = {t.id: frozenset(f.id for f in t.match_fields) for t in state.tables}
        self._table_actions = {t.id: frozenset(t.action_ids) for t in state.tables}
        self._alloc: Callable[[], p4runtime_pb2.Entity] = p4runtime_pb2.Entity  # set by `read`, under the lock

    # -- writes -----------------------------------------------------------------------------------------------------
    def write(self, update_type: int, entity: p4runtime_pb2.Entity) -> None:
        if update_type not in (INSERT, MODIFY, DELETE):
            raise _invalid("update type must be INSERT, MODIFY or DELETE")
        kind = entity.WhichOneof("entity")
        handler = {
            "table_entry": self._write_table_entry,
            "packet_replication_engine_entry": self._write_pre,
            "register_entry": self._write_register,
            "counter_entry": self._write_counter,
            "direct_counter_entry": self._write_direct_counter,
            "meter_entry": self._write_meter,
            "direct_meter_entry": self._write_direct_meter,
            "digest_entry": self._write_digest,
            "value_set_entry": self._write_value_set,
            "action_profile_member": self._write_member,
            "action_profile_group": self._write_group,
        }.get(kind or "")
        if handler is None:
            if kind == "extern_entry":
                raise RuntimeStateError(code_pb2.UNIMPLEMENTED, f"{kind} is not supported by this target")
            raise RuntimeStateError(code_pb2.UNKNOWN, "Incorrect entity type")
        with self.state.lock:
            handler(update_type, getattr(entity, kind))

    # tables
    def _table(self, table_id: int) -> TableState:
        table = self.state.tables.get(table_id) if table_id else None
        if table is None:
            raise _invalid(f"unknown table id {table_id}")
        return table

    def _write_table_entry(self, update_type: int, te: p4runtime_pb2.TableEntry) -> None:
        table = self._table(te.table_id)
        if te.HasField("time_since_last_hit"):
            raise _invalid("time_since_last_hit must not be set in a WriteRequest")
        if te.idle_timeout_ns < 0:
            raise _invalid("idle_timeout_ns cannot be negative")
        if te.is_const:  # P4Runtime spec (TableEntry): is_const must be false in any INSERT, MODIFY or DELETE
            raise _invalid("is_const must be false in a write")
        if te.is_default_action:
            self._write_default(update_type, table, te)
            return
        if table.is_const:
            raise RuntimeStateError(code_pb2.PERMISSION_DENIED, f"table {table.name} is const")
        match, priority = self.match_key(table, te)
        if table.profile is not None:
            self._write_indirect_entry(update_type, table, te, match, priority)
            return
        if update_type == DELETE:
            table.delete(match, priority)
            return
        # P4Runtime spec (Action Specification): a MODIFY may leave the action unset; the entry keeps its action, and
        # with no direct resource in the request the MODIFY changes nothing
        keep = update_type == MODIFY and not te.HasField("action")
        if keep:
            kept = table.get(match, priority)
            if kept is None:
                raise RuntimeStateError(code_pb2.NOT_FOUND, f"table {table.name}: no such entry")
            action_id, args = kept.action_id, kept.action_args
        else:
            action_id, args = self.action(table, te, default=False)
        meter_config = self._meter_config_of(table, te)
        if te.HasField("meter_counter_data") and table.direct_meter_in_bytes is None:
            raise _invalid(f"table {table.name} has no direct meter (meter_counter_data)")
        if te.idle_timeout_ns and not table.supports_idle_timeout:
            raise _invalid(f"idle_timeout_ns must be 0 for table {table.name}, which does not support idle timeout")
        if update_type == INSERT:
            entry = table.new_entry(match, priority, action_id, args, metadata=te.metadata,
                                    controller_metadata=te.controller_metadata, idle_timeout_ns=te.idle_timeout_ns,
                                    last_hit_ns=time.monotonic_ns())
            if te.HasField("counter_data"):
                self._require_direct_counter(table)
                entry.packets, entry.bytes = te.counter_data.packet_count, te.counter_data.byte_count
            if entry.meter is not None and meter_config is not None:
                entry.meter.configure(meter_config)
            table.insert(entry)
            return
        existing = table.get(match, priority)
        if existing is None:
            raise RuntimeStateError(code_pb2.NOT_FOUND, f"table {table.name}: no such entry")
        if te.HasField("counter_data"):
            self._require_direct_counter(table)
        if not keep:
            table.modify(match, priority, action_id, args)
            existing.metadata, existing.controller_metadata = te.metadata, te.controller_metadata
        if not keep and existing.idle_timeout_ns != te.idle_timeout_ns:  # a new TTL counts from now, as PI sets it
            existing.idle_timeout_ns, existing.last_hit_ns = te.idle_timeout_ns, time.monotonic_ns()
        if te.HasField("counter_data"):
            existing.packets, existing.bytes = te.counter_data.packet_count, te.counter_data.byte_count
        if existing.meter is not None and meter_config is not None:
            existing.meter.configure(meter_config)

    def _write_indirect_entry(self, update_type: int, table: TableState, te: p4runtime_pb2.TableEntry,
                              match: Match, priority: int) -> None:
        """An entry of an indirect table: it points at a member or (with a selector) a group of the table's
        profile; PI maps an unknown id to INVALID_ARGUMENT. Reference counts keep referenced members and groups
        from being deleted."""
        profile = table.profile
        if update_type == DELETE:
            self._unref(profile, table.delete(match, priority))
            return
        if te.HasField("counter_data"):
            self._require_direct_counter(table)
        meter_config = self._meter_config_of(table, te)
        if te.HasField("meter_counter_data") and table.direct_meter_in_bytes is None:
            raise _invalid(f"table {table.name} has no direct meter (meter_counter_data)")
        if te.idle_timeout_ns and not table.supports_idle_timeout:
            raise _invalid(f"idle_timeout_ns must be 0 for table {table.name}, which does not support idle timeout")
        kind = te.action.WhichOneof("type") if te.HasField("action") else None
        if kind == "action_profile_member_id":
            member_id = te.action.action_profile_member_id
            member = profile.members.get(member_id)
            if member is None:
                raise _invalid(f"table {table.name}: cannot map member id {member_id} to a handle")
            ref, action_id, args = ("member", member_id), member.action_id, member.args
        elif kind == "action_profile_group_id":
            group_id = te.action.action_profile_group_id
            if not profile.with_selector or group_id not in profile.groups:
                raise _invalid(f"table {table.name}: cannot map group id {group_id} to a handle")
            ref, action_id, args = ("group", group_id), GROUP_ACTION, (group_id,)
        elif kind == "action_profile_action_set":
            actions = []
            for item in te.action.action_profile_action_set.action_profile_actions:
                aid = item.action.action_id
                if aid not in self._action_names:
                    raise _invalid(f"unknown action id {aid}")
                if aid not in profile.action_ids:
                    raise _invalid("Invalid action for action profile")
                actions.append((aid, self.action_args(item.action), item.weight))
            if update_type == INSERT and table.get(match, priority) is not None:
                raise RuntimeStateError(code_pb2.ALREADY_EXISTS, f"table {table.name}: entry already exists")
            if update_type == MODIFY and table.get(match, priority) is None:
                raise RuntimeStateError(code_pb2.NOT_FOUND, f"table {table.name}: no such entry")
            key = profile.create_oneshot(actions)
            ref, action_id, args = ("oneshot", key), GROUP_ACTION, (key,)
        elif kind is None:
            raise _invalid(f"table {table.name}: entry without an action")
        else:
            raise _invalid(f"table {table.name} is indirect: its entries name an action profile member, group or "
                           f"action set, not a direct action")
        if ref[0] != "oneshot" and profile.mode == "oneshot" and profile.groups:
            raise _invalid("Invalid attempt to mix action selector programming modes")
        if update_type == INSERT:
            entry = table.new_entry(match, priority, action_id, args, metadata=te.metadata,
                                    controller_metadata=te.controller_metadata, idle_timeout_ns=te.idle_timeout_ns,
                                    last_hit_ns=time.monotonic_ns())
            entry.ref = ref
            try:
                table.insert(entry)
            except RuntimeStateError:
                if ref[0] == "oneshot":
                    profile.delete_oneshot(ref[1])
                raise
        else:
            existing = table.get(match, priority)
            if existing is None:
                raise RuntimeStateError(code_pb2.NOT_FOUND, f"table {table.name}: no such entry")
            self._unref(profile, existing)
            table.modify(match, priority, action_id, args)
            existing.ref = ref
            existing.metadata, existing.controller_metadata = te.metadata, te.controller_metadata
            entry = existing
        if ref[0] != "oneshot":
            target = profile.members[ref[1]] if ref[0] == "member" else profile.groups[ref[1]]
            target.table_refs += 1
        if te.HasField("counter_data"):
            entry.packets, entry.bytes = te.counter_data.packet_count, te.counter_data.byte_count
        if entry.meter is not None and meter_config is not None:
            entry.meter.configure(meter_config)

    @staticmethod
    def _unref(profile: Any, entry: Entry) -> None:
        if entry.ref is None:
            return
        kind, ident = entry.ref
        if kind == "oneshot":  # the entry owned its action set's group and members (PI deletes them with it)
            profile.delete_oneshot(ident)
            entry.ref = None
            return
        target = (profile.members if kind == "member" else profile.groups).get(ident)
        if target is not None:
            target.table_refs -= 1
        entry.ref = None

    # action profiles
    def _profile(self, profile_id: int) -> Any:
        profile = self.state.action_profiles.get(profile_id) if profile_id else None
        if profile is None:
            raise _invalid(f"unknown action profile id {profile_id}")
        return profile

    def _write_member(self, update_type: int, m: p4runtime_pb2.ActionProfileMember) -> None:
        profile = self._profile(m.action_profile_id)
        if update_type == DELETE:
            profile.delete_member(m.member_id)
            return
        action_id = m.action.action_id
        name = self._action_names.get(action_id)
        if name is None:
            raise _invalid(f"unknown action id {action_id}")
        if action_id not in profile.action_ids:
            raise _invalid("Invalid action for action profile")
        args = self.action_args(m.action)
        if update_type == INSERT:
            profile.insert_member(m.member_id, action_id, args)
            return
        profile.modify_member(m.member_id, action_id, args)
        for table in self.state.tables:  # entries pointing straight at the member run its new action
            if table.profile is profile:
                for entry in table.entries():
                    if entry.ref == ("member", m.member_id):
                        assert entry.match is not None
                        table.modify(entry.match, entry.priority, action_id, args)

    def _write_group(self, update_type: int, g: p4runtime_pb2.ActionProfileGroup) -> None:
        profile = self._profile(g.action_profile_id)
        if update_type == DELETE:
            profile.delete_group(g.group_id)
            return
        profile.write_group(update_type == INSERT, g.group_id, g.max_size,
                            [(m.member_id, m.weight) for m in g.members])

    def _read_members(self, req: p4runtime_pb2.ActionProfileMember) -> list[p4runtime_pb2.Entity]:
        profiles = ([self._profile(req.action_profile_id)] if req.action_profile_id
                    else sorted(self.state.action_profiles, key=lambda p: p.id))
        out = []
        for profile in profiles:
            ids = [req.member_id] if req.member_id else sorted(profile.members)
            for member_id in ids:
                member = profile.members.get(member_id)
                if member is None:
                    continue
                entity = self._alloc()
                msg = entity.action_profile_member
                msg.action_profile_id, msg.member_id = profile.id, member_id
                action = msg.action
                action.action_id = member.action_id
                for p, value in zip(self.state.actions[member.action_id].params, member.args, strict=True):
                    action.params.add(param_id=p.id, value=encode_bytes(value))
                out.append(entity)
        return out

    def _read_groups(self, req: p4runtime_pb2.ActionProfileGroup) -> list[p4runtime_pb2.Entity]:
        profiles = ([self._profile(req.action_profile_id)] if req.action_profile_id
                    else sorted(self.state.action_profiles, key=lambda p: p.id))
        out = []
        for profile in profiles:
            ids = [req.group_id] if req.group_id else sorted(g for g in profile.groups if g > 0)
            for group_id in ids:
                group = profile.groups.get(group_id)
                if group is None:
                    continue
                entity = self._alloc()
                msg = entity.action_profile_group
                msg.action_profile_id, msg.group_id, msg.max_size = profile.id, group_id, group.max_size
                for member_id, weight in sorted(group.weights.items()):  # PI keeps members in an ordered map
                    msg.members.add(member_id=member_id, weight=weight)
                out.append(entity)
        return out

    def _write_default(self, update_type: int, table: TableState, te: p4runtime_pb2.TableEntry) -> None:
        if table.profile is not None:  # PI (DeviceMgr), whatever the action
            raise _invalid("Cannot set / reset default action for indirect table")
        if te.match:
            raise _invalid("a default entry has no match fields")
        if te.priority:
            raise _invalid("a default entry has no priority")
        if te.idle_timeout_ns:  # P4Runtime spec (Idle-timeout): no idle timeout for default entries
            raise _invalid("a default entry has no idle timeout")
        if update_type != MODIFY:
            raise _invalid("default entries can only be modified (use MODIFY)")
        if te.HasField("counter_data") or te.HasField("meter_config") or te.HasField("meter_counter_data"):
            # BMv2 counts and meters hits only: its default entry has neither
            raise _invalid(f"table {table.name}: the default entry has no direct counter or meter")
        if not te.HasField("action"):
            if table.default_is_const:
                raise RuntimeStateError(code_pb2.PERMISSION_DENIED, f"table {table.name} has a const default action")
            table.reset_default()
            return
        action_id, args = self.action(table, te, default=True)
        if table.default_is_const and (action_id, args) != (table.default_entry.action_id,
                                                             table.default_entry.action_args):
            raise RuntimeStateError(code_pb2.PERMISSION_DENIED, f"table {table.name} has a const default action")
        table.set_default(action_id, args)

    def _require_direct_counter(self, table: TableState) -> None:
        if not table.has_direct_counter:
            raise _invalid(f"table {table.name} has no direct counter")

    def _meter_config_of(self, table: TableState, te: p4runtime_pb2.TableEntry) -> MeterConfig | None:
        if not te.HasField("meter_config"):
            return None
        if table.direct_meter_in_bytes is None:
            raise _invalid(f"table {table.name} has no direct meter")
        return meter_config_from_proto(te.meter_config)

    def match_key(self, table: TableState, te: p4runtime_pb2.TableEntry) -> tuple[Match, int]:
        """The normalized match and the priority of a (non-default) entry, as PI checks them."""
        by_id: dict[int, p4runtime_pb2.FieldMatch] = {}
        known = self._field_ids[table.id]
        for fm in te.match[:]:  # a slice is one call; iterating a repeated field is one call per element
            field_id = fm.field_id
            if field_id not in known:
                raise _invalid(f"table {table.name}: unknown match field id {field_id}")
            if field_id in by_id:
                raise _invalid(f"table {table.name}: match field id {field_id} given twice")
            by_id[field_id] = fm
        match = tuple([_field_match(table, info, by_id.get(info.id)) for info in table.match_fields])
        priority = te.priority
        if table.needs_priority:
            if priority <= 0:
                raise _invalid(f"table {table.name} needs a priority > 0 for its ternary/range/optional match")
        elif priority != 0:
            raise _invalid(f"table {table.name}: priority given for a table without ternary/range/optional match")
        return match, priority

    def action(self, table: TableState, te: p4runtime_pb2.TableEntry, *, default: bool) -> tuple[int, tuple[int, ...]]:
        kind = te.action.WhichOneof("type") if te.HasField("action") else None
        if kind is None:
            raise _invalid(f"table {table.name}: entry without an action")
        if kind != "action":
            raise _invalid(f"table {table.name} is not an indirect table (no action profile)")
        action = te.action.action
        action_id = action.action_id
        name = self._action_names.get(action_id)
        if name is None:
            raise _invalid(f"unknown action id {action_id}")
        if action_id not in self._table_actions[table.id]:
            raise _invalid(f"action {name} is not an action of table {table.name}")
        if default and action_id in table.table_only_actions:
            raise _invalid(f"action {name} cannot be a default action")
        if not default and action_id in table.default_only_actions:
            raise _invalid(f"action {name} is default-only")
        return action_id, self.action_args(action)

    def action_args(self, action: p4runtime_pb2.Action) -> tuple[int, ...]:
        action_id = action.action_id
        name = self._action_names[action_id]
        given: dict[int, bytes] = {}
        for p in action.params[:]:
            param_id = p.param_id
            if param_id in given:
                raise _invalid(f"action {name}: parameter id {param_id} given twice")
            given[param_id] = p.value
        params = self._params[action_id]
        if len(given) > len(params) or any(pid not in given for pid, _, _ in params):
            unknown = set(given) - {pid for pid, _, _ in params}
            if unknown:
                raise _invalid(f"action {name}: unknown parameter id {min(unknown)}")
            missing = next(pname for pid, pname, _ in params if pid not in given)
            raise _invalid(f"action {name}: missing parameter {missing}")
        return tuple([decode_bytes(given[pid], width, f"action {name} parameter {pname}")
                      for pid, pname, width in params])

    # PRE
    def _write_pre(self, update_type: int, pre: p4runtime_pb2.PacketReplicationEngineEntry) -> None:
        kind = pre.WhichOneof("type")
        if kind == "multicast_group_entry":
            self._write_mcast(update_type, pre.multicast_group_entry)
        elif kind == "clone_session_entry":
            self._write_clone(update_type, pre.clone_session_entry)
        else:
            raise _invalid("empty packet_replication_engine_entry")

    def _write_mcast(self, update_type: int, g: p4runtime_pb2.MulticastGroupEntry) -> None:
        groups = self.state.pre.mcast_groups
        if g.multicast_group_id == 0:
            raise _invalid("multicast group id 0 is invalid")
        if g.multicast_group_id >= FIRST_RESERVED_GROUP_ID:
            raise RuntimeStateError(code_pb2.OUT_OF_RANGE, f"multicast group id {g.multicast_group_id} is too high "
                                    f"(ids from {FIRST_RESERVED_GROUP_ID} are reserved for clone sessions)")
        if update_type == DELETE:
            if groups.pop(g.multicast_group_id, None) is None:
                raise RuntimeStateError(code_pb2.NOT_FOUND, f"multicast group {g.multicast_group_id} does not exist")
            return
        replicas = _replicas(g.replicas)
        if update_type == INSERT and g.multicast_group_id in groups:
            raise RuntimeStateError(code_pb2.ALREADY_EXISTS, f"multicast group {g.multicast_group_id} exists")
        if update_type == MODIFY and g.multicast_group_id not in groups:
            raise RuntimeStateError(code_pb2.NOT_FOUND, f"multicast group {g.multicast_group_id} does not exist")
        groups[g.multicast_group_id] = MulticastGroup(g.multicast_group_id, replicas, g.metadata)

    def _write_clone(self, update_type: int, c: p4runtime_pb2.CloneSessionEntry) -> None:
        sessions = self.state.pre.clone_sessions
        if not MIN_CLONE_SESSION_ID <= c.session_id < MAX_CLONE_SESSION_ID:
            raise RuntimeStateError(code_pb2.OUT_OF_RANGE, f"clone session id {c.session_id} out of range "
                                    f"[{MIN_CLONE_SESSION_ID}, {MAX_CLONE_SESSION_ID})")
        if update_type == DELETE:
            if sessions.pop(c.session_id, None) is None:
                raise RuntimeStateError(code_pb2.NOT_FOUND, f"clone session {c.session_id} does not exist")
            return
        if c.packet_length_bytes < 0:
            raise _invalid("packet_length_bytes cannot be negative")
        if c.class_of_service > MAX_CLASS_OF_SERVICE:
            raise _invalid(f"class_of_service {c.class_of_service} does not fit v1model's 3-bit priority")
        replicas = _replicas(c.replicas)
        if update_type == INSERT and c.session_id in sessions:
            raise RuntimeStateError(code_pb2.ALREADY_EXISTS, f"clone session {c.session_id} exists")
        if update_type == MODIFY and c.session_id not in sessions:
            raise RuntimeStateError(code_pb2.NOT_FOUND, f"clone session {c.session_id} does not exist")
        sessions[c.session_id] = CloneSession(c.session_id, replicas, c.class_of_service, c.packet_length_bytes)

    # registers, counters, meters
    def _indexed(self, objects: Any, object_id: int, what: str) -> Any:
        obj = objects.get(object_id) if object_id else None
        if obj is None:
            raise _invalid(f"unknown {what} id {object_id}")
        return obj

    @staticmethod
    def _indices(entry: Any, size: int, what: str) -> range:
        if not entry.HasField("index"):
            return range(size)
        index = entry.index.index
        if index < 0:
            raise _invalid("A negative number is not a valid index value")
        if index >= size:
            raise RuntimeStateError(code_pb2.OUT_OF_RANGE, f"{what}: index {index} out of range (size {size})")
        return range(index, index + 1)

    def _write_register(self, update_type: int, r: p4runtime_pb2.RegisterEntry) -> None:
        reg = self._indexed(self.state.registers, r.register_id, "register")
        if update_type != MODIFY:
            raise _invalid("registers can only be modified (use MODIFY)")
        indices = self._indices(r, reg.size, reg.name)
        if r.data.WhichOneof("data") != "bitstring":
            raise _invalid(f"register {reg.name}: data must be a bitstring")
        value = decode_bytes(r.data.bitstring, reg.bitwidth, f"register {reg.name}")
        for i in indices:
            reg.cells[i] = value

    def _write_counter(self, update_type: int, c: p4runtime_pb2.CounterEntry) -> None:
        counter = self._indexed(self.state.counters, c.counter_id, "counter")
        if not c.HasField("index"):
            raise RuntimeStateError(code_pb2.UNIMPLEMENTED, "wildcard writes are not supported for counters (as PI)")
        if update_type == INSERT:
            raise _invalid("INSERT update type not supported for counters")
        indices = self._indices(c, counter.size, counter.name)
        packets, nbytes = (c.data.packet_count, c.data.byte_count) if update_type == MODIFY else (0, 0)
        for i in indices:
            counter.packets[i], counter.bytes[i] = packets, nbytes

    def _direct_target(self, te: p4runtime_pb2.TableEntry, direct: Any, what: str) -> tuple[TableState, Entry]:
        table = self._table(te.table_id)
        if table.name not in {d.table.name for d in direct}:
            raise _invalid(f"table {table.name} has no {what}")
        if te.is_default_action:
            raise RuntimeStateError(code_pb2.UNIMPLEMENTED, f"table {table.name}: no {what} for the default entry "
                                    "(BMv2 counts and meters hits only)")
        match, priority = self.match_key(table, te)
        entry = table.get(match, priority)
        if entry is None:  # PI: "Cannot map table entry to handle"
            raise _invalid(f"table {table.name}: no such entry")
        return table, entry

    def _write_direct_counter(self, update_type: int, d: p4runtime_pb2.DirectCounterEntry) -> None:
        if not d.HasField("table_entry"):
            raise _invalid("Missing table_entry field in DirectCounterEntry")
        if update_type == INSERT:
            raise _invalid("INSERT update type not supported for counters")
        _, entry = self._direct_target(d.table_entry, self.state.direct_counters, "direct counter")
        if update_type == MODIFY:
            entry.packets, entry.bytes = d.data.packet_count, d.data.byte_count
        else:
            entry.packets = entry.bytes = 0

    def _write_meter(self, update_type: int, m: p4runtime_pb2.MeterEntry) -> None:
        meter = self._indexed(self.state.meters, m.meter_id, "meter")
        if not m.HasField("index"):
            raise RuntimeStateError(code_pb2.UNIMPLEMENTED, "wildcard writes are not supported for meters (as PI)")
        if update_type == INSERT:
            raise _invalid("INSERT update type not supported for meters")
        indices = self._indices(m, meter.size, meter.name)
        config = meter_config_from_proto(m.config) if update_type == MODIFY and m.HasField("config") else None
        for i in indices:
            meter.cells[i].configure(config)

    def _write_direct_meter(self, update_type: int, d: p4runtime_pb2.DirectMeterEntry) -> None:
        if not d.HasField("table_entry"):
            raise _invalid("Missing table_entry field in DirectMeterEntry")
        if update_type == INSERT:
            raise _invalid("INSERT update type not supported for meters")
        _, entry = self._direct_target(d.table_entry, self.state.direct_meters, "direct meter")
        config = meter_config_from_proto(d.config) if update_type == MODIFY and d.HasField("config") else None
        if entry.meter is None:
            entry.meter = MeterCell()
        entry.meter.configure(config)

    def _write_digest(self, update_type: int, d: p4runtime_pb2.DigestEntry) -> None:
        digest = self._indexed(self.state.digests, d.digest_id, "digest")
        if update_type == DELETE:
            if digest.config is None:
                raise RuntimeStateError(code_pb2.NOT_FOUND, f"digest {digest.name} is not configured")
            digest.configure(None)
            return
        if update_type == INSERT and digest.config is not None:
            raise RuntimeStateError(code_pb2.ALREADY_EXISTS, f"digest {digest.name} is already configured")
        if update_type == MODIFY and digest.config is None:
            raise RuntimeStateError(code_pb2.NOT_FOUND, f"digest {digest.name} is not configured")
        cfg = d.config
        if cfg.max_timeout_ns < 0 or cfg.max_list_size < 0 or cfg.ack_timeout_ns < 0:
            raise _invalid(f"digest {digest.name}: config values cannot be negative")
        digest.configure(DigestConfig(cfg.max_timeout_ns, cfg.max_list_size, cfg.ack_timeout_ns))

    def _write_value_set(self, update_type: int, v: p4runtime_pb2.ValueSetEntry) -> None:
        vs = self._indexed(self.state.value_sets, v.value_set_id, "value set")
        if update_type != MODIFY:
            raise _invalid("value sets can only be modified (use MODIFY)")
        if len(v.members) > vs.size:
            raise RuntimeStateError(code_pb2.RESOURCE_EXHAUSTED, f"value set {vs.name} holds at most {vs.size}")
        members = []
        for member in v.members:
            by_id = {fm.field_id: fm for fm in member.match}
            members.append(tuple(_value_set_field(vs.name, info, by_id.get(info.id)) for info in vs.fields))
        vs.members = members

    # -- reads -------------------------------------------------------------------------------------------------------
    def read(self, entity: p4runtime_pb2.Entity,
             alloc: Callable[[], p4runtime_pb2.Entity] | None = None) -> list[p4runtime_pb2.Entity]:
        """The entities a Read of `entity` returns. `alloc` (e.g. `response.entities.add`) creates each result in
        place: copying messages is what a large read costs most with the pure-Python protobuf runtime."""
        kind = entity.WhichOneof("entity")
        handler = {
            "table_entry": self._read_table_entries,
            "packet_replication_engine_entry": self._read_pre,
            "register_entry": self._read_registers,
            "counter_entry": self._read_counters,
            "direct_counter_entry": self._read_direct_counters,
            "meter_entry": self._read_meters,
            "direct_meter_entry": self._read_direct_meters,
            "digest_entry": self._read_digests,
            "value_set_entry": self._read_value_sets,
            "action_profile_member": self._read_members,
            "action_profile_group": self._read_groups,
        }.get(kind or "")
        if handler is None:
            if kind == "extern_entry":
                raise RuntimeStateError(code_pb2.UNIMPLEMENTED, f"{kind} is not supported by this target")
            raise RuntimeStateError(code_pb2.UNKNOWN, "Incorrect entity type")
        with self.state.lock:
            self._alloc = alloc or p4runtime_pb2.Entity
            try:
                return handler(getattr(entity, kind))
            finally:
                self._alloc = p4runtime_pb2.Entity

    def _read_table_entries(self, req: p4runtime_pb2.TableEntry) -> list[p4runtime_pb2.Entity]:
        if req.table_id == 0:
            tables = sorted(self.state.tables, key=lambda t: t.id)
        else:
            tables = [self._table(req.table_id)]
        out = []
        for table in tables:
            if req.HasField("time_since_last_hit") and not table.supports_idle_timeout:
                raise _invalid(f"table {table.name} does not support idle timeout: do not set time_since_last_hit")
            if req.is_default_action:
                entity = self._alloc()
                self.default_entry_to_proto(table, req, into=entity.table_entry)
                out.append(entity)
                continue
            wanted: tuple[Match, int] | None = None
            if req.match:
                wanted = self.match_key(table, req)
            for entry in table.entries():
                if wanted is not None and entry.ident != wanted:
                    continue
                if not _read_filter(entry, req):
                    continue
                entity = self._alloc()
                self.entry_to_proto(table, entry, req, into=entity.table_entry)
                out.append(entity)
        return out

    def entry_to_proto(self, table: TableState, entry: Entry, req: p4runtime_pb2.TableEntry | None = None, *,
                       into: p4runtime_pb2.TableEntry | None = None) -> p4runtime_pb2.TableEntry:
        te = p4runtime_pb2.TableEntry() if into is None else into
        te.table_id = table.id
        assert entry.match is not None
        for info, (a, b) in zip(table.match_fields, entry.match, strict=True):
            _field_to_proto(te, info, a, b)
        if table.needs_priority:
            te.priority = entry.priority
        if entry.ref is not None:
            if entry.ref[0] == "member":
                te.action.action_profile_member_id = entry.ref[1]
            elif entry.ref[0] == "group":
                te.action.action_profile_group_id = entry.ref[1]
            else:
                action_set = te.action.action_profile_action_set
                action_set.SetInParent()
                for action_id, args, weight in table.profile.groups[entry.ref[1]].actions:
                    item = action_set.action_profile_actions.add(weight=weight)
                    item.action.action_id = action_id
                    for p, value in zip(self.state.actions[action_id].params, args, strict=True):
                        item.action.params.add(param_id=p.id, value=encode_bytes(value))
        else:
            self._action_to_proto(te, entry.action_id, entry.action_args)
        if entry.metadata:
            te.metadata = entry.metadata
        if entry.controller_metadata:
            te.controller_metadata = entry.controller_metadata
        if entry.idle_timeout_ns:
            te.idle_timeout_ns = entry.idle_timeout_ns
        if req is not None and req.HasField("time_since_last_hit"):  # PI: 0 for entries without a TTL
            elapsed = time.monotonic_ns() - entry.last_hit_ns if entry.idle_timeout_ns else 0
            te.time_since_last_hit.elapsed_ns = max(elapsed, 0)
        if entry.is_const:
            te.is_const = True
        self._direct_data(table, entry, te, req)
        return te

    def default_entry_to_proto(self, table: TableState, req: p4runtime_pb2.TableEntry | None = None, *,
                               into: p4runtime_pb2.TableEntry | None = None) -> p4runtime_pb2.TableEntry:
        te = p4runtime_pb2.TableEntry() if into is None else into
        te.table_id, te.is_default_action = table.id, True
        entry = table.default_entry
        self._action_to_proto(te, entry.action_id, entry.action_args)
        self._direct_data(table, entry, te, req)
        return te

    def _action_to_proto(self, te: p4runtime_pb2.TableEntry, action_id: int, args: tuple[int, ...]) -> None:
        action = te.action.action
        action.action_id = action_id
        info = self.state.actions.get(action_id)
        if info is None:
            return
        for p, value in zip(info.params, args, strict=True):
            action.params.add(param_id=p.id, value=encode_bytes(value))

    @staticmethod
    def _direct_data(table: TableState, entry: Entry, te: p4runtime_pb2.TableEntry,
                     req: p4runtime_pb2.TableEntry | None) -> None:
        if req is None:
            return
        if req.HasField("counter_data") and table.has_direct_counter:
            te.counter_data.packet_count, te.counter_data.byte_count = entry.packets, entry.bytes
        if req.HasField("meter_config") and entry.meter is not None and entry.meter.config is not None:
            te.meter_config.CopyFrom(meter_config_to_proto(entry.meter.config))

    def _read_pre(self, req: p4runtime_pb2.PacketReplicationEngineEntry) -> list[p4runtime_pb2.Entity]:
        kind = req.WhichOneof("type")
        out = []
        if kind == "multicast_group_entry":
            gid = req.multicast_group_entry.multicast_group_id
            groups = self.state.pre.mcast_groups
            for group_id in ([gid] if gid else sorted(groups)):
                group = groups.get(group_id)
                if group is None:
                    raise RuntimeStateError(code_pb2.NOT_FOUND, f"multicast group {group_id} does not exist")
                entity = self._alloc()
                msg = entity.packet_replication_engine_entry.multicast_group_entry
                msg.multicast_group_id = group.id
                _replicas_to_proto(msg.replicas, group.replicas)
                if group.metadata:
                    msg.metadata = group.metadata
                out.append(entity)
        elif kind == "clone_session_entry":
            sid = req.clone_session_entry.session_id
            sessions = self.state.pre.clone_sessions
            for session_id in ([sid] if sid else sorted(sessions)):
                session = sessions.get(session_id)
                if session is None:
                    raise RuntimeStateError(code_pb2.NOT_FOUND, f"clone session {session_id} does not exist")
                entity = self._alloc()
                cs = entity.packet_replication_engine_entry.clone_session_entry
                cs.session_id = session.id
                _replicas_to_proto(cs.replicas, session.replicas)
                cs.class_of_service = session.class_of_service
                cs.packet_length_bytes = session.packet_length_bytes
                out.append(entity)
        else:
            raise _invalid("empty packet_replication_engine_entry")
        return out

    def _all_or_one(self, objects: Any, object_id: int, what: str) -> list[Any]:
        if object_id == 0:
            return sorted(objects, key=lambda o: o.id)
        return [self._indexed(objects, object_id, what)]

    def _read_registers(self, req: p4runtime_pb2.RegisterEntry) -> list[p4runtime_pb2.Entity]:
        out = []
        for reg in self._all_or_one(self.state.registers, req.register_id, "register"):
            for i in self._indices(req, reg.size, reg.name):
                entity = self._alloc()
                r = entity.register_entry
                r.register_id, r.index.index = reg.id, i
                r.data.bitstring = encode_bytes(reg.cells[i])
                out.append(entity)
        return out

    def _read_counters(self, req: p4runtime_pb2.CounterEntry) -> list[p4runtime_pb2.Entity]:
        out = []
        for counter in self._all_or_one(self.state.counters, req.counter_id, "counter"):
            for i in self._indices(req, counter.size, counter.name):
                entity = self._alloc()
                c = entity.counter_entry
                c.counter_id, c.index.index = counter.id, i
                _counter_data(c.data, counter.unit, counter.packets[i], counter.bytes[i])
                out.append(entity)
        return out

    def _read_direct_counters(self, req: p4runtime_pb2.DirectCounterEntry) -> list[p4runtime_pb2.Entity]:
        return self._read_direct(req, self.state.direct_counters, "direct counter", self._fill_direct_counter)

    def _read_direct_meters(self, req: p4runtime_pb2.DirectMeterEntry) -> list[p4runtime_pb2.Entity]:
        return self._read_direct(req, self.state.direct_meters, "direct meter", self._fill_direct_meter)

    def _read_direct(self, req: Any, direct: Any, what: str, fill: Any) -> list[p4runtime_pb2.Entity]:
        te = req.table_entry
        if te.table_id == 0:
            tables = sorted((d.table for d in direct), key=lambda t: t.id)
        else:
            tables = [self._table(te.table_id)]
            if tables[0].name not in {d.table.name for d in direct}:
                raise _invalid(f"table {tables[0].name} has no {what}")
        out = []
        for table in tables:
            resource = next(d for d in direct if d.table is table)
            if te.is_default_action or te.match:
                _, entry = self._direct_target(te, direct, what)
                pairs = [(entry, te.is_default_action)]
            else:
                pairs = [(e, False) for e in table.entries()]
            for entry, is_default in pairs:
                entity = self._alloc()
                fill(entity, table, entry, is_default, resource)
                out.append(entity)
        return out

    def _fill_direct_counter(self, entity: p4runtime_pb2.Entity, table: TableState, entry: Entry,
                             is_default: bool, resource: Any) -> None:
        d = entity.direct_counter_entry
        if is_default:
            self.default_entry_to_proto(table, into=d.table_entry)
        else:
            self.entry_to_proto(table, entry, into=d.table_entry)
        _counter_data(d.data, resource.unit, entry.packets, entry.bytes)

    def _fill_direct_meter(self, entity: p4runtime_pb2.Entity, table: TableState, entry: Entry,
                           is_default: bool, resource: Any) -> None:
        d = entity.direct_meter_entry
        if is_default:
            self.default_entry_to_proto(table, into=d.table_entry)
        else:
            self.entry_to_proto(table, entry, into=d.table_entry)
        if entry.meter is not None and entry.meter.config is not None:
            d.config.CopyFrom(meter_config_to_proto(entry.meter.config))

    def _read_meters(self, req: p4runtime_pb2.MeterEntry) -> list[p4runtime_pb2.Entity]:
        out = []
        for meter in self._all_or_one(self.state.meters, req.meter_id, "meter"):
            for i in self._indices(req, meter.size, meter.name):
                entity = self._alloc()
                m = entity.meter_entry
                m.meter_id, m.index.index = meter.id, i
                config = meter.cells[i].config
                if config is not None:
                    m.config.CopyFrom(meter_config_to_proto(config))
                out.append(entity)
        return out

    def _read_digests(self, req: p4runtime_pb2.DigestEntry) -> list[p4runtime_pb2.Entity]:
        out = []
        for digest in self._all_or_one(self.state.digests, req.digest_id, "digest"):
            if digest.config is None:
                if req.digest_id:
                    raise RuntimeStateError(code_pb2.NOT_FOUND, f"digest {digest.name} is not configured")
                continue
            entity = self._alloc()
            d = entity.digest_entry
            d.digest_id = digest.id
            d.config.max_timeout_ns = digest.config.max_timeout_ns
            d.config.max_list_size = digest.config.max_list_size
            d.config.ack_timeout_ns = digest.config.ack_timeout_ns
            out.append(entity)
        return out

    def _read_value_sets(self, req: p4runtime_pb2.ValueSetEntry) -> list[p4runtime_pb2.Entity]:
        out = []
        for vs in self._all_or_one(self.state.value_sets, req.value_set_id, "value set"):
            entity = self._alloc()
            v = entity.value_set_entry
            v.value_set_id = vs.id
            for member in vs.members:
                m = v.members.add()
                for info, (value, mask) in zip(vs.fields, member, strict=True):
                    fm = m.match.add(field_id=info.id)
                    if info.kind == TERNARY:
                        fm.ternary.value, fm.ternary.mask = encode_bytes(value), encode_bytes(mask)
                    elif info.kind == LPM:
                        fm.lpm.value, fm.lpm.prefix_len = encode_bytes(value), mask.bit_count()
                    else:
                        fm.exact.value = encode_bytes(value)
            out.append(entity)
        return out


# ------------------------------------------------------------------------------------------------- field helpers


def _read_filter(entry: Entry, req: p4runtime_pb2.TableEntry) -> bool:
    """The P4Runtime spec's wildcard-read filters (Wildcard Reads): a non-default priority, action id,
    controller_metadata or metadata in the request keeps only the entries that have it."""
    if req.priority and entry.priority != req.priority:
        return False
    if req.HasField("action") and req.action.action.action_id and entry.action_id != req.action.action.action_id:
        return False
    if req.controller_metadata and entry.controller_metadata != req.controller_metadata:
        return False
    return not req.metadata or entry.metadata == req.metadata


def _field_match(table: TableState, info: MatchFieldInfo, fm: p4runtime_pb2.FieldMatch | None) -> tuple[int, int]:
    what = f"table {table.name} field {info.name}"
    full = info.full_mask
    width = info.bitwidth
    if fm is None:
        if info.kind == EXACT:
            raise _invalid(f"{what}: exact match fields cannot be omitted")
        return (0, full) if info.kind == RANGE else (0, 0)
    kind = fm.WhichOneof("field_match_type")
    if info.kind == EXACT:
        if kind != "exact":
            raise _invalid(f"{what}: expected an exact match")
        value = decode_bytes(fm.exact.value, width, what)
        return (value, full)
    if info.kind == LPM:
        if kind != "lpm":
            raise _invalid(f"{what}: expected an lpm match")
        value = decode_bytes(fm.lpm.value, width, what)
        plen = fm.lpm.prefix_len
        if plen < 0 or plen > width:
            raise _invalid(f"{what}: prefix length {plen} out of range 1..{width}")
        if plen == 0:
            raise _invalid(f"{what}: a prefix length of 0 is a don't care; omit the field instead")
        mask = (full >> (width - plen)) << (width - plen)
        if value & ~mask:
            raise _invalid(f"{what}: bits set past the prefix length {plen}")
        return (value, mask)
    if info.kind == TERNARY:
        if kind != "ternary":
            raise _invalid(f"{what}: expected a ternary match")
        value = decode_bytes(fm.ternary.value, width, what)
        mask = decode_bytes(fm.ternary.mask, width, what)
        if mask == 0:
            raise _invalid(f"{what}: a zero mask is a don't care; omit the field instead")
        if value & ~mask:
            raise _invalid(f"{what}: value has bits outside the mask (value & mask != value)")
        return (value, mask)
    if info.kind == RANGE:
        if kind != "range":
            raise _invalid(f"{what}: expected a range match")
        low = decode_bytes(fm.range.low, width, what)
        high = decode_bytes(fm.range.high, width, what)
        if low == 0 and high == full:
            raise _invalid(f"{what}: the full range is a don't care; omit the field instead")
        if low > high:
            raise _invalid(f"{what}: low > high")
        return (low, high)
    if info.kind == OPTIONAL:
        if kind != "optional":
            raise _invalid(f"{what}: expected an optional match")
        return (decode_bytes(fm.optional.value, width, what), full)
    raise RuntimeStateError(code_pb2.UNIMPLEMENTED, f"{what}: unsupported match kind")


def _field_to_proto(te: p4runtime_pb2.TableEntry, info: MatchFieldInfo, a: int, b: int) -> None:
    """Append one field in canonical form; don't-care fields are omitted, as PI does."""
    if info.kind == RANGE:
        if a == 0 and b == info.full_mask:
            return
        fm = te.match.add(field_id=info.id)
        fm.range.low, fm.range.high = encode_bytes(a), encode_bytes(b)
        return
    if info.kind != EXACT and b == 0:
        return
    fm = te.match.add(field_id=info.id)
    if info.kind == EXACT:
        fm.exact.value = encode_bytes(a)
    elif info.kind == LPM:
        fm.lpm.value, fm.lpm.prefix_len = encode_bytes(a), b.bit_count()
    elif info.kind == TERNARY:
        fm.ternary.value, fm.ternary.mask = encode_bytes(a), encode_bytes(b)
    else:
        fm.optional.value = encode_bytes(a)


def _value_set_field(name: str, info: MatchFieldInfo, fm: p4runtime_pb2.FieldMatch | None) -> tuple[int, int]:
    what = f"value set {name} field {info.name}"
    if fm is None:
        raise _invalid(f"{what}: missing")
    kind = fm.WhichOneof("field_match_type")
    if kind == "exact":
        return (decode_bytes(fm.exact.value, info.bitwidth, what), info.full_mask)
    if kind == "ternary":
        mask = decode_bytes(fm.ternary.mask, info.bitwidth, what)
        return (decode_bytes(fm.ternary.value, info.bitwidth, what) & mask, mask)
    if kind == "lpm":
        plen = fm.lpm.prefix_len
        if not 0 <= plen <= info.bitwidth:
            raise _invalid(f"{what}: bad prefix length {plen}")
        mask = (info.full_mask >> (info.bitwidth - plen)) << (info.bitwidth - plen)
        return (decode_bytes(fm.lpm.value, info.bitwidth, what) & mask, mask)
    raise _invalid(f"{what}: unsupported match kind {kind}")


def _replicas(replicas: Iterable[p4runtime_pb2.Replica]) -> list[Replica]:
    out: list[Replica] = []
    seen: set[tuple[int, int]] = set()
    for r in replicas:
        which = r.WhichOneof("port_kind")
        if which == "port":
            port = decode_bytes(r.port, 32, "replica port")
            out_r = Replica(r.instance, port, bytes(r.port))
        else:
            port = r.egress_port
            out_r = Replica(r.instance, port)
        if r.instance > MAX_INSTANCE:
            raise _invalid(f"replica instance {r.instance} does not fit v1model's 16-bit egress_rid")
        if (port, r.instance) in seen:
            raise _invalid(f"duplicate replica (port {port}, instance {r.instance})")
        seen.add((port, r.instance))
        out.append(out_r)
    return out


def _replicas_to_proto(field: Any, replicas: list[Replica]) -> None:
    """Ordered by (instance, port), as PI keeps them; each in the form (port bytes or egress_port) it was written."""
    for r in sorted(replicas, key=lambda r: (r.rid, r.port)):
        msg = field.add(instance=r.rid)
        if r.port_bytes is not None:
            msg.port = encode_bytes(r.port)
        else:
            msg.egress_port = r.port


def _counter_data(data: p4runtime_pb2.CounterData, unit: int, packets: int, nbytes: int) -> None:
    spec = p4info_pb2.CounterSpec
    if unit in (spec.PACKETS, spec.BOTH):
        data.packet_count = packets
    if unit in (spec.BYTES, spec.BOTH):
        data.byte_count = nbytes


def meter_config_from_proto(cfg: p4runtime_pb2.MeterConfig) -> MeterConfig:
    """-1 is valid (P4Runtime: every packet is GREEN); any other negative value is not."""
    for name in ("cir", "cburst", "pir", "pburst"):
        if getattr(cfg, name) < -1:
            raise _invalid(f"meter config: negative {name}")
    if cfg.cir > cfg.pir >= 0:  # BMv2 refuses a committed rate above the peak rate
        raise _invalid("meter config: cir must not exceed pir")
    return MeterConfig(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)


def meter_config_to_proto(cfg: MeterConfig) -> p4runtime_pb2.MeterConfig:
    return p4runtime_pb2.MeterConfig(cir=cfg.cir, cburst=cfg.cburst, pir=cfg.pir, pburst=cfg.pburst)


def p4data_bitstring(value: int) -> p4data_pb2.P4Data:
    return p4data_pb2.P4Data(bitstring=encode_bytes(value))


# -------------------------------------------------------------------------------------------------- batches


def apply_updates(codec: EntityCodec, updates: Iterable[p4runtime_pb2.Update]) -> list[RuntimeStateError | None]:
    """CONTINUE_ON_ERROR: every update is tried; the result holds None for success or the error, per update."""
    results: list[RuntimeStateError | None] = []
    for update in updates:
        try:
            codec.write(update.type, update.entity)
            results.append(None)
        except RuntimeStateError as exc:
            results.append(exc)
        except Exception as exc:  # a bug must cost one update (INTERNAL), never the batch or the switch
            _log.exception("update failed unexpectedly")
            results.append(RuntimeStateError(code_pb2.INTERNAL, f"internal error: {type(exc).__name__}: {exc}"))
    return results


class EntriesFileError(RuntimeStateError):
    """An entries file (`--entries`) cannot be read or one of its updates was refused."""


def load_write_request(state: RuntimeState, p4info: p4info_pb2.P4Info | None, path: str | Path) -> int:
    """Apply a WriteRequest in protobuf text format (tests/conformance/cases/*/entries.txtpb) to `state`.

    All updates are checked as the P4Runtime server checks them; the first refused one stops loading with a
    one-line error naming the file and the update. Returns the number of updates applied. `p4info` may be None
    (the state's own P4Info is used); if given it must be the state's."""
    if p4info is not None and p4info is not state.p4info and p4info != state.p4info:
        raise EntriesFileError(code_pb2.INVALID_ARGUMENT, f"{path}: P4Info differs from the installed pipeline's")
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise EntriesFileError(code_pb2.NOT_FOUND, f"{path}: {exc.strerror}") from None
    request = p4runtime_pb2.WriteRequest()
    try:
        text_format.Parse(text, request)
    except text_format.ParseError as exc:
        raise EntriesFileError(code_pb2.INVALID_ARGUMENT, f"{path}: not a WriteRequest in text format: {exc}") from None
    codec = EntityCodec(state)
    for n, update in enumerate(request.updates, 1):
        try:
            codec.write(update.type, update.entity)
        except RuntimeStateError as exc:
            code = code_pb2.Code.Name(exc.code)
            raise EntriesFileError(exc.code, f"{path}: update {n}: {code}: {exc}") from None
    return len(request.updates)
