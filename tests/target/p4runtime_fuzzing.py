"""Seeded P4Runtime request generation and checking against the independent oracle (`p4runtime_oracle`).

`Generator` builds Write and Read requests for a P4Info: mostly valid entries (small value pools, so inserts collide,
modifies and deletes find their entries), then mutated by rules of the specification (widths, prefixes, masks,
priorities, ids, duplicated or missing fields, default entries, PRE ids and replicas) or by blind field mutation.
`Checker` sends every request to a live server, compares the codes with the oracle's, reads back what was accepted
and compares the switch's whole state with the oracle's model."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import TypeVar

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from p4runtime_oracle import OK, Model, Refused, Schema, normalized
from p4runtime_support import Client, update_codes

EDGE_INTS = (0, 1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 127, 128, 255, 256, 511, 512, 4095, 32767, 32768, 65535, 65536,
             2**31 - 1)
MF = p4info_pb2.MatchField
ANY_ANSWER = frozenset(c.name for c in grpc.StatusCode if c.name != "INTERNAL")
M = TypeVar("M", bound=Message)


def mutate_bytes(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    """Blind byte-level mutation: bit flips, truncations, splices from `pool`, byte overwrites, insertions."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        if op == 0 and buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            del buf[rng.randrange(len(buf)):]
        elif op == 2:
            other = rng.choice(pool)
            buf += other[rng.randrange(len(other) + 1):]
        elif op == 3 and buf:
            buf[rng.randrange(len(buf))] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        else:
            at = rng.randrange(len(buf) + 1)
            buf[at:at] = rng.randbytes(rng.randrange(1, 9))
    return bytes(buf)


def _set_fields(msg: Message, out: list[tuple[Message, FieldDescriptor]]) -> None:
    for fd, value in msg.ListFields():
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            out.append((msg, fd))
            for item in (value if fd.label == FieldDescriptor.LABEL_REPEATED else [value]):
                _set_fields(item, out)
        elif fd.label != FieldDescriptor.LABEL_REPEATED:
            out.append((msg, fd))


def mutate_fields(rng: random.Random, request: M, rounds: int = 3) -> M:
    """Blind structure-aware mutation of a copy of `request`: a set field gets an edge value, is cleared, or a
    repeated element is duplicated or removed. The result always decodes."""
    msg = copy.deepcopy(request)
    for _ in range(rng.randint(1, rounds)):
        fields: list[tuple[Message, FieldDescriptor]] = []
        _set_fields(msg, fields)
        if not fields:
            break
        owner, fd = rng.choice(fields)
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            if fd.label == FieldDescriptor.LABEL_REPEATED:
                items = getattr(owner, fd.name)
                if items and rng.random() < 0.5:
                    items.add().CopyFrom(items[rng.randrange(len(items))])
                elif items:
                    del items[rng.randrange(len(items))]
            else:
                owner.ClearField(fd.name)
        elif fd.type == FieldDescriptor.TYPE_BYTES:
            setattr(owner, fd.name, rng.choice((b"", b"\x00", b"\x00" + getattr(owner, fd.name), b"\xff" * rng.randint(1, 6),
                                                rng.randbytes(rng.randint(1, 6)))))
        elif fd.type == FieldDescriptor.TYPE_STRING:
            setattr(owner, fd.name, rng.choice(("", "x" * rng.randint(1, 16))))
        elif fd.type == FieldDescriptor.TYPE_BOOL:
            setattr(owner, fd.name, not getattr(owner, fd.name))
        elif fd.type == FieldDescriptor.TYPE_ENUM:
            setattr(owner, fd.name, rng.choice([v.number for v in fd.enum_type.values]))
        elif fd.type in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT32,
                         FieldDescriptor.TYPE_SINT64):
            setattr(owner, fd.name, rng.choice((*EDGE_INTS[:12], -1, -(2**31), getattr(owner, fd.name) + 1)))
        else:
            value = rng.choice((*EDGE_INTS, getattr(owner, fd.name) + rng.choice((-1, 1)),
                                getattr(owner, fd.name) ^ (1 << rng.randrange(32))))
            setattr(owner, fd.name, max(0, value))
    return msg


def encode(rng: random.Random, value: int, bitwidth: int) -> bytes:
    """`value` as a valid P4Runtime byte string: canonical, padded to the field's bytes, or padded further."""
    shortest = max(1, (value.bit_length() + 7) // 8)
    width = rng.choice((shortest, shortest, max(shortest, (bitwidth + 7) // 8), shortest + rng.randint(1, 3)))
    return value.to_bytes(width, "big")


@dataclass
class Generator:
    """Requests for one P4Info, mostly valid then mutated."""

    p4info: p4info_pb2.P4Info
    rng: random.Random
    election: int
    mutation_rate: float = 0.45
    tables: list[p4info_pb2.Table] = field(init=False)
    actions: dict[int, p4info_pb2.Action] = field(init=False)

    def __post_init__(self) -> None:
        self.tables = list(self.p4info.tables)
        self.actions = {a.preamble.id: a for a in self.p4info.actions}

    def value(self, bitwidth: int) -> int:
        rng = self.rng
        pool = [0, 1, 6, (1 << bitwidth) - 1, 0x0A000000 & ((1 << bitwidth) - 1), 0x0A010000 & ((1 << bitwidth) - 1)]
        return rng.choice(pool) if rng.random() < 0.95 else rng.getrandbits(bitwidth)

    def field_match(self, f: p4info_pb2.MatchField) -> p4runtime_pb2.FieldMatch | None:
        """A valid match for `f`, or None for a don't care (never for exact fields)."""
        rng, w = self.rng, f.bitwidth
        fm = p4runtime_pb2.FieldMatch(field_id=f.id)
        if f.match_type == MF.EXACT:
            fm.exact.value = encode(rng, self.value(w), w)
        elif f.match_type == MF.LPM:
            plen = rng.choice((w, w // 2, w // 4 or 1, 0))
            if plen == 0:
                return None
            fm.lpm.value = encode(rng, self.value(w) & (((1 << plen) - 1) << (w - plen)), w)
            fm.lpm.prefix_len = plen
        elif f.match_type == MF.TERNARY:
            mask = rng.choice(((1 << w) - 1, 0x0F, 1 << (w - 1), 0))
            if mask == 0:
                return None
            fm.ternary.value, fm.ternary.mask = encode(rng, self.value(w) & mask, w), encode(rng, mask, w)
        elif f.match_type == MF.RANGE:
            a, b = sorted((self.value(w), self.value(w)))
            if (a, b) == (0, (1 << w) - 1):
                return None
            fm.range.low, fm.range.high = encode(rng, a, w), encode(rng, b, w)
        else:
            if rng.random() < 0.3:
                return None
            fm.optional.value = encode(rng, self.value(w), w)
        return fm

    def action(self, table: p4info_pb2.Table) -> p4runtime_pb2.TableAction:
        ta = p4runtime_pb2.TableAction()
        action = self.actions[self.rng.choice(list(table.action_refs)).id]
        ta.action.action_id = action.preamble.id
        for p in action.params:
            ta.action.params.add(param_id=p.id, value=encode(self.rng, self.value(p.bitwidth), p.bitwidth))
        return ta

    def table_entry(self) -> tuple[int, p4runtime_pb2.TableEntry]:
        rng = self.rng
        table = rng.choice(self.tables)
        te = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
        kind = rng.choices((p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE),
                           (5, 3, 2))[0]
        if rng.random() < 0.1:
            te.is_default_action = True
            kind = p4runtime_pb2.Update.MODIFY
            if rng.random() < 0.8:
                te.action.CopyFrom(self.action(table))
            return kind, te
        fields = [fm for fm in (self.field_match(f) for f in table.match_fields) if fm is not None]
        rng.shuffle(fields)  # the spec does not order the match fields of a request
        te.match.extend(fields)
        if any(f.match_type in (MF.TERNARY, MF.RANGE, MF.OPTIONAL) for f in table.match_fields):
            te.priority = rng.choice((1, 2, 10))
        te.action.CopyFrom(self.action(table))
        if rng.random() < 0.1:
            te.controller_metadata = rng.choice((1, 2**63))
        if rng.random() < 0.1:
            te.metadata = rng.choice((b"m", b"\x00\x01"))
        return kind, te

    def replicas(self, holder: Message) -> None:
        for _ in range(self.rng.randint(0, 3)):
            port, instance = self.rng.choice((1, 2, 3, 255)), self.rng.choice((0, 1, 2))
            if self.rng.random() < 0.5:
                holder.replicas.add(egress_port=port, instance=instance)
            else:
                holder.replicas.add(port=encode(self.rng, port, 32), instance=instance)

    def pre_entry(self) -> tuple[int, p4runtime_pb2.Entity]:
        rng = self.rng
        kind = rng.choices((p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE),
                           (5, 3, 2))[0]
        entity = p4runtime_pb2.Entity()
        pre = entity.packet_replication_engine_entry
        if rng.random() < 0.6:
            pre.multicast_group_entry.multicast_group_id = rng.choice((1, 2, 3))
            self.replicas(pre.multicast_group_entry)
            if rng.random() < 0.2:
                pre.multicast_group_entry.metadata = b"g"
        else:
            pre.clone_session_entry.session_id = rng.choice((1, 5, 100))
            self.replicas(pre.clone_session_entry)
            pre.clone_session_entry.packet_length_bytes = rng.choice((0, 0, 128))
        return kind, entity

    def targeted(self, update: p4runtime_pb2.Update) -> None:
        """One rule-directed mutation of `update` (each breaks, or nearly breaks, one rule of the spec)."""
        rng = self.rng
        te = update.entity.table_entry if update.entity.HasField("table_entry") else None
        if te is None:
            pre = update.entity.packet_replication_engine_entry
            holder = pre.multicast_group_entry if pre.HasField("multicast_group_entry") else pre.clone_session_entry
            choice = rng.randrange(5)
            if choice == 0 and holder.replicas:
                holder.replicas.add().CopyFrom(holder.replicas[0])  # duplicate (port, instance)
            elif choice == 1:
                holder.replicas.add(egress_port=1, instance=rng.choice((65535, 65536, 2**32 - 1)))
            elif choice == 2:
                holder.replicas.add(port=rng.choice((b"", b"\x01" + bytes(4), b"\x00" * 6 + b"\x07")), instance=3)
            elif choice == 3 and pre.HasField("multicast_group_entry"):
                holder.multicast_group_id = rng.choice((0, 32767, 32768, 65536))
            elif choice == 3:
                holder.session_id = rng.choice((0, 511, 512))
            elif pre.HasField("clone_session_entry"):
                holder.class_of_service = rng.choice((1, 7, 8, 300))
            else:
                update.type = rng.choice((0, 1, 2, 3))
            return
        choice = rng.randrange(14)
        if choice == 0 and te.match:  # widen a value past the field
            fm = rng.choice(te.match)
            kind = fm.WhichOneof("field_match_type")
            sub = getattr(fm, kind)
            attr = "low" if kind == "range" else "value"
            setattr(sub, attr, b"\x01" + bytes(getattr(sub, attr)))
        elif choice == 1 and te.match:  # lpm: prefix out of range or bits past it
            for fm in te.match:
                if fm.HasField("lpm"):
                    fm.lpm.prefix_len = rng.choice((0, -1, fm.lpm.prefix_len - 1, fm.lpm.prefix_len + 1, 33))
        elif choice == 2 and te.match:  # ternary: value outside the mask, or a zero mask
            for fm in te.match:
                if fm.HasField("ternary"):
                    fm.ternary.mask = rng.choice((b"\x00", b"\x01", fm.ternary.mask))
                    fm.ternary.value = rng.choice((fm.ternary.value, b"\x07"))
        elif choice == 3:
            te.priority = rng.choice((0, -1, 1, 7))
        elif choice == 4 and te.match:
            te.match.add().CopyFrom(rng.choice(te.match))  # a field twice
        elif choice == 5 and te.match:
            del te.match[rng.randrange(len(te.match))]  # drop one (exact: refused; others: a don't care)
        elif choice == 6:
            te.match.add(field_id=rng.choice((0, 3, 99))).exact.value = b"\x01"
        elif choice == 7 and te.action.HasField("action"):
            params = te.action.action.params
            op = rng.randrange(4)
            if op == 0 and params:
                del params[rng.randrange(len(params))]
            elif op == 1 and params:
                params.add().CopyFrom(params[0])
            elif op == 2:
                params.add(param_id=rng.choice((0, 3, 9)), value=b"\x01")
            elif params:
                params[0].value = rng.choice((b"", b"\x02\x00", b"\x00\x00\x01\xff", b"\xff\xff"))
        elif choice == 8:
            te.action.action.action_id = rng.choice([a for a in self.actions] + [0, 1, 33554431])
        elif choice == 9:
            te.ClearField("action")
        elif choice == 10:
            te.is_default_action = not te.is_default_action
        elif choice == 11:
            rng.choice((lambda: setattr(te, "is_const", True), lambda: setattr(te, "idle_timeout_ns", 1_000_000),
                        lambda: te.time_since_last_hit.SetInParent(), lambda: te.counter_data.SetInParent(),
                        lambda: te.meter_config.SetInParent(), lambda: te.meter_counter_data.SetInParent(),
                        lambda: setattr(te.action, "action_profile_member_id", 1)))()
        elif choice == 12:
            te.table_id = rng.choice((0, 1, te.table_id + 1, 33554431))
        else:
            update.type = rng.choice((0, 1, 2, 3, 7))

    def write(self) -> p4runtime_pb2.WriteRequest:
        rng = self.rng
        request = p4runtime_pb2.WriteRequest(device_id=0)
        request.election_id.low = self.election
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            if rng.random() < 0.8:
                kind, te = self.table_entry()
                update = request.updates.add(type=kind)
                update.entity.table_entry.CopyFrom(te)
            else:
                kind, entity = self.pre_entry()
                update = request.updates.add(type=kind, entity=entity)
            if rng.random() < self.mutation_rate:
                self.targeted(update)
        roll = rng.random()
        if roll < 0.08:
            return mutate_fields(rng, request)
        if roll < 0.10:
            rng.choice((lambda: setattr(request, "device_id", rng.choice((1, 7))),
                        lambda: setattr(request.election_id, "low", rng.choice((0, self.election - 1, self.election + 1))),
                        lambda: request.ClearField("election_id"),
                        lambda: setattr(request, "atomicity", rng.choice((1, 2)))))()
        return request

    def read(self) -> p4runtime_pb2.ReadRequest:
        rng = self.rng
        request = p4runtime_pb2.ReadRequest(device_id=0)
        te = request.entities.add().table_entry
        table = rng.choice(self.tables)
        te.table_id = rng.choice((table.preamble.id, table.preamble.id, 0))
        roll = rng.random()
        if roll < 0.15:
            te.is_default_action = True
        elif roll < 0.45 and te.table_id:
            _, full = self.table_entry()
            if full.table_id == te.table_id and not full.is_default_action:
                te.match.extend(full.match)
                te.priority = full.priority
        if rng.random() < 0.2:
            te.priority = rng.choice((1, 2, 10))
        if rng.random() < 0.15:
            te.action.action.action_id = rng.choice(list(table.action_refs)).id
        if rng.random() < 0.1:
            te.controller_metadata = rng.choice((1, 2**63))
        if rng.random() < 0.1:
            te.metadata = b"m"
        if rng.random() < 0.25:
            return mutate_fields(rng, request, rounds=2)
        return request


@dataclass
class Tally:
    sent: int = 0
    accepted_updates: int = 0
    refused_updates: int = 0
    read_backs: int = 0
    reads: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)

    def count(self, code: str) -> None:
        self.codes[code] = self.codes.get(code, 0) + 1


def _top_level(request: p4runtime_pb2.WriteRequest, election: int) -> frozenset[str] | None:
    """The codes for a request refused as a whole (Write RPC): another device, not the primary's election id,
    an atomicity this target does not implement; None when the updates are looked at one by one."""
    codes: set[str] = set()
    if request.device_id != 0:
        codes.add("NOT_FOUND")
    if not request.HasField("election_id") or (request.election_id.high, request.election_id.low) != (0, election):
        codes.add("PERMISSION_DENIED")
    if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
        codes |= {"UNIMPLEMENTED", "INVALID_ARGUMENT"}  # ROLLBACK_ON_ERROR / DATAPLANE_ATOMIC are optional
    return frozenset(codes) if codes else None


@dataclass
class Checker:
    """Sends requests to a live server and holds the oracle's model of what its state must be."""

    client: Client
    model: Model
    election: int
    tally: Tally = field(default_factory=Tally)

    def _expect(self, updates: list[p4runtime_pb2.Update], actual: list[str] | None) -> list[frozenset[str]]:
        out = []
        for i, update in enumerate(updates):
            out.append(self.model.update(update))
            self.model.settle(actual[i] if actual is not None else "refused")
        return out

    def _raw_write(self, data: bytes) -> tuple[str, list[str]]:
        try:
            self.client.channel.unary_unary("/p4.v1.P4Runtime/Write")(data, timeout=10)
            return OK, []
        except grpc.RpcError as exc:
            return exc.code().name, update_codes(exc)

    def write(self, request: p4runtime_pb2.WriteRequest, label: str = "", raw: bytes | None = None) -> None:
        """Send `request` (or `raw`, its exact bytes) and check the answer and what it changed."""
        self.tally.sent += 1
        top, per_update = self.client.write(request) if raw is None else self._raw_write(raw)
        self.tally.count(top)
        refused_whole = _top_level(request, self.election)
        if refused_whole is not None:
            if top not in refused_whole:
                self.tally.disagreements.append(f"{label} whole request: server {top}, spec {sorted(refused_whole)}:"
                                                f" {request}")
            return
        updates = list(request.updates)
        snapshot = copy.deepcopy(self.model)
        expected = self._expect(updates, None)
        if top == "OK":
            actual = [OK] * len(updates)
        elif top == "UNKNOWN" and len(per_update) == len(updates):
            actual = per_update
        else:
            self.tally.disagreements.append(f"{label} server {top} {per_update} for {len(updates)} updates: {request}")
            return
        if any(len(codes) > 1 and OK in codes for codes in expected):
            self.model = snapshot
            expected = self._expect(updates, actual)
        for update, want, got in zip(updates, expected, actual, strict=True):
            if got not in want:
                self.tally.disagreements.append(f"{label} update: server {got}, spec {sorted(want)}: {update}")
            if got == OK:
                self.tally.accepted_updates += 1
                self.read_back(update)
            else:
                self.tally.refused_updates += 1

    def read_back(self, update: p4runtime_pb2.Update) -> None:
        """Read what an accepted update wrote and compare with the oracle's canonical form."""
        entity = update.entity
        request = p4runtime_pb2.Entity()
        if entity.HasField("table_entry"):
            te = entity.table_entry
            req = request.table_entry
            req.table_id, req.is_default_action = te.table_id, te.is_default_action
            if not te.is_default_action:
                req.match.extend(te.match)
                req.priority = te.priority
                if not te.match and not te.priority:
                    return  # an all-don't-care key reads as a wildcard read; the final state check covers it
            try:
                want = self.model.read_table(req)
            except Refused as refused:
                self.tally.disagreements.append(f"read-back refused by the oracle ({refused.reason}): {update}")
                return
        else:
            pre = entity.packet_replication_engine_entry
            if pre.HasField("multicast_group_entry"):
                gid = pre.multicast_group_entry.multicast_group_id
                request.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = gid
                want = self.model.read_groups(gid) if gid in self.model.groups else []
            else:
                sid = pre.clone_session_entry.session_id
                request.packet_replication_engine_entry.clone_session_entry.session_id = sid
                want = self.model.read_sessions(sid) if sid in self.model.sessions else []
        self.tally.read_backs += 1
        try:
            got = self.client.read(request)
        except grpc.RpcError as exc:
            got = [] if exc.code() == grpc.StatusCode.NOT_FOUND and not want else None
            if got is None:
                self.tally.disagreements.append(f"read-back of {update} failed: {exc.code().name} {exc.details()}")
                return
        if normalized(got) != normalized(want):
            self.tally.disagreements.append(f"read-back after {update}: server {list(got)}, spec {want}")

    def _expect_read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity] | None:
        """The entities a read of `entity` returns, None for kinds the oracle does not model (any answer but
        INTERNAL is allowed for them: a read changes nothing); raises Refused."""
        kind = entity.WhichOneof("entity")
        if kind == "table_entry":
            return self.model.read_table(entity.table_entry)
        if kind == "packet_replication_engine_entry":
            pre = entity.packet_replication_engine_entry
            if pre.HasField("multicast_group_entry"):
                return self.model.read_groups(pre.multicast_group_entry.multicast_group_id)
            if pre.HasField("clone_session_entry"):
                return self.model.read_sessions(pre.clone_session_entry.session_id)
            raise Refused({"INVALID_ARGUMENT"}, "empty packet_replication_engine_entry")
        if kind is None:
            raise Refused({"INVALID_ARGUMENT", "UNKNOWN"}, "entity with no type")
        return None

    def read(self, request: p4runtime_pb2.ReadRequest, label: str = "", raw: bytes | None = None) -> None:
        """A Read: the oracle's answer (codes, or exactly the entities) against the server's."""
        self.tally.reads += 1
        want: list[p4runtime_pb2.Entity] | None = []
        codes: frozenset[str] = frozenset()
        if request.device_id != 0:
            codes = frozenset({"NOT_FOUND"})
        else:
            try:
                for entity in request.entities:
                    part = self._expect_read(entity)
                    want = None if part is None or want is None else want + part
            except Refused as refused:  # after an unmodelled entity, the server may have stopped at that one
                codes = refused.codes | (ANY_ANSWER if want is None else frozenset())
        if want is None and not codes:
            codes = ANY_ANSWER
        try:
            got: list[p4runtime_pb2.Entity] = []
            call = self.client.channel.unary_stream("/p4.v1.P4Runtime/Read")
            for data in call(request.SerializeToString() if raw is None else raw, timeout=30):
                got.extend(p4runtime_pb2.ReadResponse.FromString(data).entities)
            code = OK
        except grpc.RpcError as exc:
            code = exc.code().name
        self.tally.count(f"read {code}")
        if codes:
            if code not in codes:
                self.tally.disagreements.append(f"{label} read: server {code}, spec {sorted(codes)}: {request}")
        elif code != OK:
            self.tally.disagreements.append(f"{label} read: server {code}, spec OK: {request}")
        elif want is not None and normalized(got) != normalized(want):
            self.tally.disagreements.append(f"{label} read: server {len(got)} entities, spec {len(want)}: {request}")

    def whole_state(self) -> None:
        """Every entry, default entry, group and session on the switch against the oracle's model."""
        entities = [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())]
        entities += [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=t, is_default_action=True))
                     for t in sorted(self.model.schema.tables)]
        pre = p4runtime_pb2.Entity()
        pre.packet_replication_engine_entry.multicast_group_entry.SetInParent()
        clone = p4runtime_pb2.Entity()
        clone.packet_replication_engine_entry.clone_session_entry.SetInParent()
        got = self.client.read(*entities, pre, clone)
        if normalized(got) != normalized(self.model.everything()):
            self.tally.disagreements.append(f"whole state: server {got}, spec {self.model.everything()}")


def new_checker(client: Client, p4info: p4info_pb2.P4Info, election: int) -> Checker:
    return Checker(client, Model(Schema.from_p4info(p4info)), election)

