"""Run-time state of one pipeline: tables, stateful externs, the packet replication engine, digests, value sets.

The generated pipeline reads tables and updates registers, counters and meters through the objects here; the
P4Runtime server and the file-mode entries loader change them only through `p4switch.runtime.entries`, which
validates requests against P4Info first. Everything is keyed by P4Info fully-qualified name *and* id (`ByNameAndId`).

Match keys are tuples of unsigned ints, one per P4Info match field, in P4Info order. Table entries keep their match
in a normalized form, one 2-tuple per field: `(value, mask)` for exact, lpm, ternary and optional fields (a
don't-care field has mask 0) and `(low, high)` for range fields. An entry is identified by `(match, priority)`.

Device config (the compiler's JSON, already parsed) parts read here, all optional::

    {"tables": {"<table name>": {
        "const_entries": [               # source order; earlier entries win among equal priorities
            {"match": [FIELD, ...],      # one per P4Info match field, in order
             "priority": int | null,     # P4Runtime meaning (larger wins); null: derived from source order
             "action_id": int, "args": [int, ...]}],
        "default_action": {"action_id": int, "args": [int, ...], "const": bool}}}}   # overrides P4Info

    FIELD: null (don't care) | {"value": v} (exact, optional) | {"value": v, "mask": m} (ternary, lpm)
         | {"value": v, "prefix_len": n} (lpm) | {"low": lo, "high": hi} (range)
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import and_
from typing import Any, Generic, TypeVar

from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2

from p4switch.exceptions import DeviceConfigError, P4SwitchError

T = TypeVar("T")

EXACT = p4info_pb2.MatchField.EXACT
LPM = p4info_pb2.MatchField.LPM
TERNARY = p4info_pb2.MatchField.TERNARY
RANGE = p4info_pb2.MatchField.RANGE
OPTIONAL = p4info_pb2.MatchField.OPTIONAL

GREEN, YELLOW, RED = 0, 1, 2

# Entries of priority tables rank by (priority, earlier insertion); one int keeps the comparison cheap.
_SEQ_BITS = 40


class RuntimeStateError(P4SwitchError):
    """A state change was refused; `code` is the canonical google.rpc code the P4Runtime server answers with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _err(code: int, message: str) -> RuntimeStateError:
    return RuntimeStateError(code, message)


class ByNameAndId(Generic[T]):
    """Objects reachable by P4Info fully-qualified name or by id; iterates each object once, in P4Info order."""

    def __init__(self) -> None:
        self._by_name: dict[str, T] = {}
        self._by_id: dict[int, T] = {}

    def add(self, name: str, id_: int, obj: T) -> None:
        self._by_name[name] = obj
        self._by_id[id_] = obj

    def __getitem__(self, key: str | int) -> T:
        return self._by_id[key] if isinstance(key, int) else self._by_name[key]

    def get(self, key: str | int) -> T | None:
        return self._by_id.get(key) if isinstance(key, int) else self._by_name.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._by_id if isinstance(key, int) else key in self._by_name

    def __iter__(self) -> Iterator[T]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> list[str]:
        return list(self._by_name)

    def ids(self) -> list[int]:
        return list(self._by_id)


# --------------------------------------------------------------------------------------------------------- meters


@dataclass(frozen=True)
class MeterConfig:
    """P4Runtime meter rates: cir/pir in units per second, bursts in units (packets or bytes)."""

    cir: int
    cburst: int
    pir: int
    pburst: int


class MeterCell:
    """One two-rate three-color meter with BMv2's arithmetic (`bm_sim/meters.cpp`): token counts are integers
    derived from the time since the origin, the peak bucket is checked first, an unconfigured meter is GREEN."""

    __slots__ = ("_buckets", "config")

    def __init__(self) -> None:
        self.config: MeterConfig | None = None
        # per bucket, checked in this order: [rate per us, burst, tokens, tokens_last, color when short]
        self._buckets: list[list[Any]] = []

    def configure(self, config: MeterConfig | None) -> None:
        self.config = config
        if config is None or -1 in (config.cir, config.cburst, config.pir, config.pburst):
            self._buckets = []  # unconfigured, or P4Runtime's -1: every packet GREEN
            return
        self._buckets = [
            [config.pir / 1e6, config.pburst, config.pburst, 0, RED],
            [config.cir / 1e6, config.cburst, config.cburst, 0, YELLOW],
        ]

    def execute(self, units: int, now_us: int) -> int:
        color = GREEN
        for bucket in self._buckets:
            since_origin = int(now_us * bucket[0])
            new_tokens = since_origin - bucket[3]
            if new_tokens > 0:
                bucket[3] = since_origin
                bucket[2] = min(bucket[2] + new_tokens, bucket[1])
            if bucket[2] < units:
                color = bucket[4]
                break
            bucket[2] -= units
        return color


def _is_bytes_unit(unit: int, unit_enum: Any) -> bool:
    return bool(unit == unit_enum.BYTES)


class MeterState:
    """An indexed `meter`: `execute(index, nbytes, now_us) -> 0 green, 1 yellow, 2 red`."""

    def __init__(self, name: str, id_: int, size: int, in_bytes: bool) -> None:
        self.name, self.id, self.size, self.in_bytes = name, id_, size, in_bytes
        self.cells = [MeterCell() for _ in range(size)]

    def execute(self, index: int, nbytes: int, now_us: int) -> int:
        if not 0 <= index < self.size:
            return GREEN
        return self.cells[index].execute(nbytes if self.in_bytes else 1, now_us)


class DirectMeterState:
    """A `direct_meter` attached to a table; its cells live on the table's entries (`Entry.meter`)."""

    def __init__(self, name: str, id_: int, table: TableState, in_bytes: bool) -> None:
        self.name, self.id, self.table, self.in_bytes = name, id_, table, in_bytes

    def execute(self, entry: Entry | None, nbytes: int, now_us: int) -> int:
        """BMv2 executes a direct meter on a hit only (`match_tables.cpp`: "we only execute the direct meter if
        hit"), leaving the color field untouched on a miss; a miss here is GREEN and meters nothing."""
        if entry is None or entry.meter is None:
            return GREEN
        return entry.meter.execute(nbytes if self.in_bytes else 1, now_us)


# --------------------------------------------------------------------------------------------- counters, registers


class CounterState:
    """An indexed `counter`; both lists are always kept (P4Runtime reads report the unit the P4Info names)."""

    def __init__(self, name: str, id_: int, size: int, unit: int) -> None:
        self.name, self.id, self.size, self.unit = name, id_, size, unit
        self.packets = [0] * size
        self.bytes = [0] * size

    def count(self, index: int, nbytes: int) -> None:
        if 0 <= index < self.size:
            self.packets[index] += 1
            self.bytes[index] += nbytes


class DirectCounterState:
    """A `direct_counter` attached to a table; its cells are `Entry.packets` / `Entry.bytes`."""

    def __init__(self, name: str, id_: int, table: TableState, unit: int) -> None:
        self.name, self.id, self.table, self.unit = name, id_, table, unit

    def count(self, entry: Entry | None, nbytes: int) -> None:
        """Counts hits only, as BMv2's match units do (the default entry has no counter there)."""
        if entry is not None:
            entry.packets += 1
            entry.bytes += nbytes


class RegisterColumn:
    """The cells of a register that lives in a vector store (one column of a [size, n_arrays] numpy array): the
    same element-by-element interface as the list scalar registers use, giving and taking Python ints."""

    __slots__ = ("column", "store")

    def __init__(self, store: Any, column: int) -> None:
        self.store, self.column = store, column

    def __len__(self) -> int:
        return int(self.store.shape[0])

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [int(v) for v in self.store[index, self.column]]
        return int(self.store[index, self.column])

    def __setitem__(self, index: int | slice, value: Any) -> None:
        if isinstance(index, slice):
            self.store[index, self.column] = [int(v) for v in value]
        else:
            self.store[index, self.column] = value

    def __iter__(self) -> Iterator[int]:
        return iter(self.store[:, self.column].tolist())

    def __eq__(self, other: object) -> bool:
        try:
            return list(self) == list(other)  # type: ignore[call-overload]
        except TypeError:
            return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


class RegisterState:
    """A `register`: `cells` is indexed directly by generated code; values are unsigned ints of `bitwidth` bits.
    Registers of a vectorised group (`RuntimeState.register_store`) keep the same `cells` interface over a column
    of the group's numpy store."""

    def __init__(self, name: str, id_: int, size: int, bitwidth: int) -> None:
        self.name, self.id, self.size, self.bitwidth = name, id_, size, bitwidth
        self.cells: list[int] | RegisterColumn = [0] * size

    def reset(self) -> None:
        self.cells[:] = [0] * self.size


# ---------------------------------------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    kind: int  # p4info MatchField.MatchType

    @property
    def full_mask(self) -> int:
        return (1 << self.bitwidth) - 1


@dataclass(eq=False, slots=True)
class Entry:
    """One table entry (or a table's default entry, with `match=None`). Direct counter and meter data live here."""

    match: tuple[tuple[int, int], ...] | None
    priority: int
    action_id: int
    action_args: tuple[int, ...]
    is_const: bool = False
    metadata: bytes = b""
    controller_metadata: int = 0  # deprecated P4Runtime field, stored and returned as PI does
    idle_timeout_ns: int = 0
    last_hit_ns: int = 0  # kept only in tables with idle timeout support (monotonic clock)
    notified_hit_ns: int = -1  # last_hit_ns when its expiry was last reported
    packets: int = 0
    bytes: int = 0
    meter: MeterCell | None = None
    seq: int = 0
    handle: int = 0
    rank: int = 0
    result: tuple[bool, int, tuple[int, ...], Entry | None] = field(default=(False, 0, (), None))
    ref: tuple[str, int] | None = None  # indirect tables: ("member" | "group", id) the entry points at

    @property
    def ident(self) -> tuple[tuple[tuple[int, int], ...] | None, int]:
        return (self.match, self.priority)


LookupResult = tuple[bool, int, tuple[int, ...], "Entry | None"]


class _ExactResults(dict[tuple[int, ...], LookupResult]):
    """An exact table's index: key -> the entry's lookup result, and for any other key the miss result (the
    default action). The table's `lookup` is this dict's own `__getitem__`: a hit is one C call, without the
    Python frame a method doing `dict.get` costs (about 0.2 us of some 15 lookups per p4ina.p4 packet)."""

    __slots__ = ("miss",)

    def __init__(self, miss: LookupResult) -> None:
        super().__init__()
        self.miss = miss

    def __missing__(self, key: tuple[int, ...]) -> LookupResult:
        return self.miss


class _MaskGroup:
    """Entries sharing one mask per field (tuple space search): masked key -> entries, best rank first."""

    __slots__ = ("buckets", "mask0", "masks", "max_rank")

    def __init__(self, masks: tuple[int, ...]) -> None:
        self.masks = masks
        self.mask0 = masks[0]  # one-field tables key their buckets by the masked int itself
        self.buckets: dict[Any, list[Entry]] = {}
        self.max_rank = -(1 << 62)

    def refresh_max(self) -> None:
        self.max_rank = max((b[0].rank for b in self.buckets.values()), default=-(1 << 62))


class TableState:
    """A match-action table. `lookup(key)` picks its algorithm once, from the P4Info match kinds:
    exact -> one dict lookup; lpm/ternary/optional -> tuple space search over the distinct mask tuples;
    any range field -> a scan in rank order. Winners: longest prefix for lpm-only tables, otherwise the highest
    P4Runtime priority, then the earlier entry."""

    def __init__(
        self,
        name: str,
        id_: int,
        match_fields: list[MatchFieldInfo],
        action_ids: list[int],
        size: int,
        *,
        is_const: bool = False,
        default_only_actions: frozenset[int] = frozenset(),
        table_only_actions: frozenset[int] = frozenset(),
        supports_idle_timeout: bool = False,
    ) -> None:
        self.name, self.id, self.size, self.is_const = name, id_, size, is_const
        self.match_fields = match_fields
        self.action_ids = action_ids
        self.default_only_actions = default_only_actions
        self.table_only_actions = table_only_actions
        self.supports_idle_timeout = supports_idle_timeout
        kinds = {f.kind for f in match_fields}
        self.needs_priority = bool(kinds & {TERNARY, RANGE, OPTIONAL})
        self.has_range = RANGE in kinds
        self.exact_only = kinds <= {EXACT}
        self._lpm_fields = [i for i, f in enumerate(match_fields) if f.kind == LPM]
        self.has_direct_counter = False
        self.direct_meter_in_bytes: bool | None = None
        self.profile: Any = None  # the ProfileState of an indirect table (`implementation = ...`)
        self._entries: dict[tuple[Any, int], Entry] = {}
        self._miss: LookupResult = (False, 0, (), None)
        self._exact = _ExactResults(self._miss)
        self._groups: dict[tuple[int, ...], _MaskGroup] = {}
        self._group_order: list[_MaskGroup] = []
        self._ranked: list[Entry] = []
        self._scan: list[tuple[tuple[tuple[int, int, int, bool], ...], Entry]] = []
        self._scan1: list[tuple[int, int, Entry]] = []
        self._single = len(match_fields) == 1
        self._seq = 0
        self._free_handles: list[int] = []
        self._next_handle = 0
        self.default_entry = Entry(None, 0, 0, ())
        self.default_is_const = False
        self.initial_default: tuple[int, tuple[int, ...]] = (0, ())
        self.lookup: Callable[[tuple[int, ...]], LookupResult]
        """`lookup(key) -> (hit, action_id, action_args, entry)`; on a miss the default action and `entry=None`."""
        if self.exact_only:
            self.lookup = self._exact.__getitem__
        elif self.has_range:
            self.lookup = self._lookup_range1 if self._single else self._lookup_scan
        else:
            self.lookup = self._lookup_tss1 if self._single else self._lookup_tss
        if supports_idle_timeout:
            self.lookup = self._timed(self.lookup)

    @staticmethod
    def _timed(inner: Callable[[tuple[int, ...]], LookupResult]) -> Callable[[tuple[int, ...]], LookupResult]:
        """Tables with `support_timeout = true` remember each entry's last hit (BMv2's ageing); others pay nothing."""
        now = time.monotonic_ns

        def lookup(key: tuple[int, ...]) -> LookupResult:
            result = inner(key)
            entry = result[3]
            if entry is not None:
                entry.last_hit_ns = now()
            return result

        return lookup

    def expired(self, now_ns: int) -> list[Entry]:
        """Entries idle for their `idle_timeout_ns`, each reported once per period of idleness."""
        out = []
        for entry in list(self._entries.values()):
            ttl = entry.idle_timeout_ns
            if ttl and now_ns - entry.last_hit_ns >= ttl and entry.notified_hit_ns != entry.last_hit_ns:
                entry.notified_hit_ns = entry.last_hit_ns
                out.append(entry)
        return out

    # -- lookups (hot path) --------------------------------------------------------------------------------------
    def _lookup_tss(self, key: tuple[int, ...]) -> LookupResult:
        best: Entry | None = None
        for group in self._group_order:
            if best is not None and group.max_rank <= best.rank:
                break
            bucket = group.buckets.get(tuple(map(and_, key, group.masks)))
            if bucket is not None and (best is None or bucket[0].rank > best.rank):
                best = bucket[0]
        return self._miss if best is None else best.result

    def _lookup_tss1(self, key: tuple[int, ...]) -> LookupResult:
        k = key[0]
        best: Entry | None = None
        for group in self._group_order:
            if best is not None and group.max_rank <= best.rank:
                break
            bucket = group.buckets.get(k & group.mask0)
            if bucket is not None and (best is None or bucket[0].rank > best.rank):
                best = bucket[0]
        return self._miss if best is None else best.result

    def _lookup_scan(self, key: tuple[int, ...]) -> LookupResult:
        for checks, e in self._scan:
            for i, a, b, is_range in checks:
                k = key[i]
                if is_range:
                    if k < a or k > b:
                        break
                elif (k & b) != a:
                    break
            else:
                return e.result
        return self._miss

    def _lookup_range1(self, key: tuple[int, ...]) -> LookupResult:
        k = key[0]
        for low, high, e in self._scan1:
            if low <= k <= high:
                return e.result
        return self._miss

    # -- entries ----------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[Entry]:
        """Entries in handle order, as BMv2 returns them: a new entry takes the lowest free handle."""
        return sorted(self._entries.values(), key=lambda e: e.handle)

    def get(self, match: tuple[tuple[int, int], ...], priority: int) -> Entry | None:
        return self._entries.get((match, priority))

    def new_entry(
        self,
        match: tuple[tuple[int, int], ...],
        priority: int,
        action_id: int,
        action_args: tuple[int, ...],
        **kw: Any,
    ) -> Entry:
        """An entry for this table, with direct meter storage if the table has a direct meter (not yet inserted)."""
        entry = Entry(match, priority, action_id, action_args, **kw)
        if self.direct_meter_in_bytes is not None:
            entry.meter = MeterCell()
        return entry

    def insert(self, entry: Entry) -> None:
        if entry.match is None or len(entry.match) != len(self.match_fields):
            raise _err(code_pb2.INVALID_ARGUMENT, f"table {self.name}: wrong number of match fields")
        ident = entry.ident
        if ident in self._entries:
            raise _err(code_pb2.ALREADY_EXISTS, f"table {self.name}: entry already exists")
        if len(self._entries) >= self.size > 0:
            raise _err(code_pb2.RESOURCE_EXHAUSTED, f"table {self.name} is full ({self.size} entries)")
        self._seq += 1
        entry.seq = self._seq
        if self._free_handles:
            entry.handle = heapq.heappop(self._free_handles)
        else:
            entry.handle = self._next_handle
            self._next_handle += 1
        entry.rank = self._rank(entry)
        entry.result = (True, entry.action_id, entry.action_args, entry)
        self._entries[ident] = entry
        self._index(entry)

    def modify(self, match: tuple[tuple[int, int], ...], priority: int, action_id: int,
               action_args: tuple[int, ...]) -> Entry:
        entry = self._entries.get((match, priority))
        if entry is None:
            raise _err(code_pb2.NOT_FOUND, f"table {self.name}: no such entry")
        entry.action_id, entry.action_args = action_id, action_args
        entry.result = (True, action_id, action_args, entry)
        if self.exact_only:
            assert entry.match is not None
            self._exact[tuple(v for v, _ in entry.match)] = entry.result
        return entry

    def delete(self, match: tuple[tuple[int, int], ...], priority: int) -> Entry:
        entry = self._entries.pop((match, priority), None)
        if entry is None:
            raise _err(code_pb2.NOT_FOUND, f"table {self.name}: no such entry")
        self._unindex(entry)
        heapq.heappush(self._free_handles, entry.handle)
        return entry

    def clear(self, *, keep_const: bool = True) -> None:
        for entry in list(self._entries.values()):
            if not (keep_const and entry.is_const):
                self.delete(*entry.ident)  # type: ignore[arg-type]

    def set_default(self, action_id: int, action_args: tuple[int, ...]) -> None:
        self.default_entry.action_id, self.default_entry.action_args = action_id, action_args
        self._miss = self._exact.miss = (False, action_id, action_args, None)

    def reset_default(self) -> None:
        self.set_default(*self.initial_default)

    # -- indexes ------------------------------------------------------------------------------------------------------
    def _rank(self, entry: Entry) -> int:
        assert entry.match is not None
        if self.needs_priority:
            prio = entry.priority
        elif self.exact_only:  # never compared
            return 0
        else:  # lpm (with exact fields): the longest prefix wins
            prio = sum(entry.match[i][1].bit_count() for i in self._lpm_fields)
        return (prio << _SEQ_BITS) - entry.seq

    def _bucket_key(self, entry: Entry) -> Any:
        assert entry.match is not None
        return entry.match[0][0] if self._single else tuple(v for v, _ in entry.match)

    def _index(self, entry: Entry) -> None:
        assert entry.match is not None
        if self.exact_only:
            self._exact[tuple(v for v, _ in entry.match)] = entry.result
        elif self.has_range:
            self._ranked.append(entry)
            self._ranked.sort(key=lambda e: -e.rank)
            self._compile_scan()
        else:
            masks = tuple(m for _, m in entry.match)
            group = self._groups.get(masks)
            if group is None:
                group = self._groups[masks] = _MaskGroup(masks)
            key = self._bucket_key(entry)
            # replace, never mutate: the data path reads buckets without a lock (list.sort empties a list while
            # it sorts)
            group.buckets[key] = sorted([*group.buckets.get(key, ()), entry], key=lambda e: -e.rank)
            group.max_rank = max(group.max_rank, entry.rank)
            self._order_groups()

    def _unindex(self, entry: Entry) -> None:
        assert entry.match is not None
        if self.exact_only:
            del self._exact[tuple(v for v, _ in entry.match)]
        elif self.has_range:
            self._ranked.remove(entry)
            self._compile_scan()
        else:
            masks = tuple(m for _, m in entry.match)
            group = self._groups[masks]
            values = self._bucket_key(entry)
            bucket = [e for e in group.buckets[values] if e is not entry]
            if bucket:
                group.buckets[values] = bucket
            else:
                del group.buckets[values]
            if not group.buckets:
                del self._groups[masks]
            else:
                group.refresh_max()
            self._order_groups()

    def _compile_scan(self) -> None:
        """Per entry, only the fields that constrain the key: (index, low|value, high|mask, is_range)."""
        scan = []
        for e in self._ranked:
            assert e.match is not None
            checks = []
            for i, ((a, b), info) in enumerate(zip(e.match, self.match_fields, strict=True)):
                is_range = info.kind == RANGE
                if (is_range and (a, b) == (0, info.full_mask)) or (not is_range and b == 0):
                    continue
                checks.append((i, a, b, is_range))
            scan.append((tuple(checks), e))
        self._scan = scan
        self._scan1 = [(e.match[0][0], e.match[0][1], e) for e in self._ranked if e.match is not None]

    def _order_groups(self) -> None:
        self._group_order = sorted(self._groups.values(), key=lambda g: -g.max_rank)


# ----------------------------------------------------------------------------------------------------------- PRE


@dataclass
class Replica:
    """One copy: egress port and replication id (`egress_rid`). `port_bytes` remembers a `Replica.port` written as
    bytes so a read returns the same form; None means the (deprecated) `egress_port` form."""

    rid: int
    port: int
    port_bytes: bytes | None = None


@dataclass
class MulticastGroup:
    id: int
    replicas: list[Replica]
    metadata: bytes = b""


@dataclass
class CloneSession:
    id: int
    replicas: list[Replica]
    class_of_service: int = 0
    packet_length_bytes: int = 0  # 0: no truncation


class PreState:
    """Packet replication engine: multicast groups and clone sessions, read by the traffic manager."""

    def __init__(self) -> None:
        self.mcast_groups: dict[int, MulticastGroup] = {}
        self.clone_sessions: dict[int, CloneSession] = {}

    def replicas(self, group_id: int) -> list[Replica]:
        group = self.mcast_groups.get(group_id)
        return group.replicas if group is not None else []


# --------------------------------------------------------------------------------------------------------- digests


@dataclass(frozen=True)
class DigestConfig:
    max_timeout_ns: int = 0
    max_list_size: int = 1
    ack_timeout_ns: int = 0


@dataclass
class DigestList:
    digest_id: int
    list_id: int
    data: list[tuple[int, ...]]
    timestamp_ns: int


class DigestState:
    """A `digest` stream with PI's list semantics (`proto/frontend/src/digest_mgr.cpp`): nothing flows until a
    DigestEntry configured it; a list goes out when it holds `max_list_size` samples (0: no size limit) or, at the
    latest, `max_timeout_ns` after its first sample (0: at once); with `ack_timeout_ns > 0`, a sample pending or sent
    and not yet acked (nor expired after `ack_timeout_ns`) is not reported again. Lists go to `sink`. `push` and
    `poll` must stamp times with the same clock (the switch passes its `now_us() * 1000` to both)."""

    def __init__(self, name: str, id_: int, bitwidths: list[int]) -> None:
        self.name, self.id, self.bitwidths = name, id_, bitwidths
        self.config: DigestConfig | None = None
        self.sink: Callable[[DigestList], None] | None = None
        self._lock = threading.Lock()
        self._pending: list[tuple[int, ...]] = []
        self._pending_since = 0
        self._in_flight: dict[int, tuple[list[tuple[int, ...]], int]] = {}
        self._filter: set[tuple[int, ...]] = set()
        self._next_list_id = 1
        self.dropped = 0
        # called (outside the lock) when a push leaves work for `poll` where there was none: a timer thread that
        # sleeps while every digest is idle wakes up (P4RuntimeService's housekeeping)
        self.on_pending: Callable[[], None] | None = None

    def idle(self) -> bool:
        """Nothing for `poll` to do until the next push: no sample pending, no list awaiting its ack."""
        with self._lock:
            return not self._pending and not self._in_flight

    def configure(self, config: DigestConfig | None) -> None:
        with self._lock:
            self.config = config
            if config is None:
                self._pending.clear()
                self._in_flight.clear()
                self._filter.clear()

    def push(self, values: tuple[int, ...], now_ns: int | None = None) -> None:
        """Called by the pipeline for every `digest()` it executes (`now_ns` defaults to the monotonic clock)."""
        ready: DigestList | None = None
        if now_ns is None:
            now_ns = time.monotonic_ns()
        with self._lock:
            if self.config is None:
                self.dropped += 1
                return
            if self.config.ack_timeout_ns > 0:  # as PI: no duplicate filter without an ack timeout
                if values in self._filter:
                    return
                self._filter.add(values)
            was_idle = not self._pending and not self._in_flight
            if not self._pending:
                self._pending_since = now_ns
            self._pending.append(values)
            size = self.config.max_list_size
            if (size != 0 and len(self._pending) >= size) or self.config.max_timeout_ns == 0:
                ready = self._take(now_ns)
            woke = was_idle and bool(self._pending or self._in_flight)
        if woke and self.on_pending is not None:
            self.on_pending()
        if ready is not None and self.sink is not None:
            self.sink(ready)

    def poll(self, now_ns: int | None = None) -> None:
        """Flush a batch older than `max_timeout_ns` and forget unacked lists older than `ack_timeout_ns`."""
        ready: DigestList | None = None
        if now_ns is None:
            now_ns = time.monotonic_ns()
        with self._lock:
            if self.config is None:
                return
            if self._pending and now_ns - self._pending_since >= self.config.max_timeout_ns:
                ready = self._take(now_ns)
            if self.config.ack_timeout_ns > 0:
                for list_id, (samples, sent) in list(self._in_flight.items()):
                    if now_ns - sent >= self.config.ack_timeout_ns:
                        self._release(list_id, samples)
        if ready is not None and self.sink is not None:
            self.sink(ready)

    def awaiting_ack(self) -> list[int]:
        """List ids sent and not yet acked (nor expired)."""
        with self._lock:
            return list(self._in_flight)

    def ack(self, list_id: int) -> bool:
        with self._lock:
            item = self._in_flight.get(list_id)
            if item is None:
                return False
            self._release(list_id, item[0])
            return True

    def _release(self, list_id: int, samples: list[tuple[int, ...]]) -> None:
        del self._in_flight[list_id]
        self._filter.difference_update(samples)

    def _take(self, now_ns: int) -> DigestList:
        samples, self._pending = self._pending, []
        list_id = self._next_list_id
        self._next_list_id += 1
        if self.config is not None and self.config.ack_timeout_ns > 0:  # only then are acks awaited
            self._in_flight[list_id] = (samples, now_ns)
        return DigestList(self.id, list_id, samples, now_ns)


# ------------------------------------------------------------------------------------------------------ value sets


class ValueSetState:
    """A parser `value_set`: members are `(value, mask)` tuples per field; `matches(values)` is used by `select`."""

    def __init__(self, name: str, id_: int, fields: list[MatchFieldInfo], size: int) -> None:
        self.name, self.id, self.fields, self.size = name, id_, fields, size
        self.members: list[tuple[tuple[int, int], ...]] = []

    def matches(self, values: tuple[int, ...]) -> bool:
        for member in self.members:
            if all((v & m) == mv for v, (mv, m) in zip(values, member, strict=True)):
                return True
        return False


# ------------------------------------------------------------------------------------------------------ the state


class RuntimeState:
    """Everything a pipeline reads or updates at run time, built from P4Info (+ the compiler's device config)."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.tables: ByNameAndId[TableState] = ByNameAndId()
        self.actions: dict[int, p4info_pb2.Action] = {a.preamble.id: a for a in p4info.actions}
        self.action_ids: dict[str, int] = {a.preamble.name: a.preamble.id for a in p4info.actions}
        self.registers: ByNameAndId[RegisterState] = ByNameAndId()
        self.counters: ByNameAndId[CounterState] = ByNameAndId()
        self.meters: ByNameAndId[MeterState] = ByNameAndId()
        self.direct_counters: ByNameAndId[DirectCounterState] = ByNameAndId()
        self.direct_meters: ByNameAndId[DirectMeterState] = ByNameAndId()
        self.digests: ByNameAndId[DigestState] = ByNameAndId()
        self.value_sets: ByNameAndId[ValueSetState] = ByNameAndId()
        self.action_profiles: ByNameAndId[Any] = ByNameAndId()  # ProfileState (p4switch.runtime.profiles)
        self.pre = PreState()
        self._device_config: dict[str, Any] = {}
        # one lock for control-plane changes; the data path reads without it (single writer at a time)
        self.lock = threading.RLock()

    @classmethod
    def from_p4info(cls, p4info: p4info_pb2.P4Info, device_config: dict[str, Any] | None = None) -> RuntimeState:
        state = cls(p4info)
        for t in p4info.tables:
            state.tables.add(t.preamble.name, t.preamble.id, _table_from_p4info(t))
        for r in p4info.registers:
            state.registers.add(r.preamble.name, r.preamble.id,
                                RegisterState(r.preamble.name, r.preamble.id, r.size, _bitwidth(r.type_spec, p4info)))
        for c in p4info.counters:
            state.counters.add(c.preamble.name, c.preamble.id,
                               CounterState(c.preamble.name, c.preamble.id, c.size, c.spec.unit))
        for m in p4info.meters:
            in_bytes = _is_bytes_unit(m.spec.unit, p4info_pb2.MeterSpec)
            state.meters.add(m.preamble.name, m.preamble.id, MeterState(m.preamble.name, m.preamble.id, m.size, in_bytes))
        for dc in p4info.direct_counters:
            table = state.tables[dc.direct_table_id]
            table.has_direct_counter = True
            state.direct_counters.add(dc.preamble.name, dc.preamble.id,
                                      DirectCounterState(dc.preamble.name, dc.preamble.id, table, dc.spec.unit))
        for dm in p4info.direct_meters:
            table = state.tables[dm.direct_table_id]
            in_bytes = _is_bytes_unit(dm.spec.unit, p4info_pb2.MeterSpec)
            table.direct_meter_in_bytes = in_bytes
            state.direct_meters.add(dm.preamble.name, dm.preamble.id,
                                    DirectMeterState(dm.preamble.name, dm.preamble.id, table, in_bytes))
        for d in p4info.digests:
            state.digests.add(d.preamble.name, d.preamble.id,
                              DigestState(d.preamble.name, d.preamble.id, _member_bitwidths(d.type_spec, p4info)))
        for vs in p4info.value_sets:
            fields = [MatchFieldInfo(f.id, f.name, f.bitwidth, f.match_type or EXACT) for f in vs.match]
            state.value_sets.add(vs.preamble.name, vs.preamble.id,
                                 ValueSetState(vs.preamble.name, vs.preamble.id, fields, vs.size))
        _add_profiles(state, p4info)
        state._device_config = device_config or {}
        state._apply_defaults(state._device_config)
        return state

    def _apply_defaults(self, device_config: dict[str, Any]) -> None:
        tables_cfg = device_config.get("tables", {}) or {}
        unknown = set(tables_cfg) - set(self.tables.names())
        if unknown:
            raise DeviceConfigError(f"device config names tables the P4Info lacks: {', '.join(sorted(unknown))}")
        for t in self.p4info.tables:
            table = self.tables[t.preamble.id]
            cfg = tables_cfg.get(t.preamble.name, {}) or {}
            action_id, args = self._p4info_default(t)
            is_const = t.const_default_action_id != 0
            override = cfg.get("default_action")
            if override:
                action_id = int(override["action_id"])
                args = tuple(int(a) for a in override.get("args", ()))
                is_const = bool(override.get("const", is_const))
                self._check_action(table, action_id, args, "default action")
            table.initial_default = (action_id, args)
            table.default_is_const = is_const
            table.set_default(action_id, args)
            consts = cfg.get("const_entries", []) or []
            for position, spec in enumerate(consts):
                what = f"const entry {position + 1}"
                if len(spec["match"]) != len(table.match_fields):
                    raise DeviceConfigError(f"table {table.name}: {what} has {len(spec['match'])} match fields, "
                                            f"the P4Info {len(table.match_fields)}")
                match = tuple(_const_field(f, info) for f, info in zip(spec["match"], table.match_fields, strict=True))
                prio = spec.get("priority")
                if not table.needs_priority:
                    prio = 0
                elif prio is None:
                    prio = len(consts) - position
                entry_args = tuple(int(a) for a in spec.get("args", ()))
                self._check_action(table, int(spec["action_id"]), entry_args, what)
                # `const entries` are read-only (P4Info is_const_table); plain `entries` are initial, mutable ones
                entry = table.new_entry(match, int(prio), int(spec["action_id"]), entry_args, is_const=table.is_const)
                table.insert(entry)

    def _check_action(self, table: TableState, action_id: int, args: tuple[int, ...], what: str) -> None:
        action = self.actions.get(action_id)
        if action is None or action_id not in table.action_ids:
            raise DeviceConfigError(f"table {table.name}: {what} uses action id {action_id}, not one of its actions")
        if len(args) != len(action.params):
            raise DeviceConfigError(f"table {table.name}: {what} gives {len(args)} arguments to "
                                    f"{action.preamble.name}, which takes {len(action.params)}")

    def _p4info_default(self, t: p4info_pb2.Table) -> tuple[int, tuple[int, ...]]:
        init = t.initial_default_action
        action_id = init.action_id or t.const_default_action_id
        if action_id == 0:
            noaction = self.action_ids.get("NoAction", 0)
            return noaction, ()
        action = self.actions.get(action_id)
        values = {a.param_id: int.from_bytes(a.value, "big") for a in init.arguments}
        params = action.params if action is not None else []
        return action_id, tuple(values.get(p.id, 0) for p in params)

    def register_store(self, names: tuple[str, ...]) -> Any:
        """Move registers of one element type and size into one numpy array `[size, len(names)]` (column i is
        `names[i]`: a packet's cells across the group are contiguous) and return it; the generated vector code
        indexes it directly, everything else keeps using `registers[name].cells`. Current values are kept."""
        import numpy as np

        regs = [self.registers[n] for n in names]
        size, width = regs[0].size, regs[0].bitwidth
        if any(r.size != size or r.bitwidth != width for r in regs) or width > 32:
            raise DeviceConfigError(f"registers {', '.join(names)} cannot share a vector store")
        dtype = np.uint8 if width <= 8 else np.uint16 if width <= 16 else np.uint32
        with self.lock:
            store = np.zeros((size, len(regs)), dtype=dtype)
            for column, reg in enumerate(regs):
                store[:, column] = list(reg.cells)
                reg.cells = RegisterColumn(store, column)
        return store

    def reset(self) -> None:
        """Back to the state right after `from_p4info`: initial entries and defaults only, externs zeroed."""
        with self.lock:
            for table in self.tables:
                table.clear(keep_const=False)
            self._apply_defaults(self._device_config)
            for reg in self.registers:
                reg.reset()
            for counter in self.counters:
                counter.packets[:] = [0] * counter.size
                counter.bytes[:] = [0] * counter.size
            self.pre.mcast_groups.clear()
            self.pre.clone_sessions.clear()
            for profile in self.action_profiles:
                profile.reset()


def _add_profiles(state: RuntimeState, p4info: p4info_pb2.P4Info) -> None:
    """One ProfileState per P4Info action profile, attached to the tables it implements."""
    from p4switch.runtime.profiles import ProfileState

    for ap in p4info.action_profiles:
        tables = [t for t in p4info.tables if t.implementation_id == ap.preamble.id]
        actions = frozenset(a.id for t in tables for a in t.action_refs)
        profile = ProfileState(ap.preamble.name, ap.preamble.id, ap.size, ap.with_selector, ap.max_group_size,
                               actions)
        state.action_profiles.add(ap.preamble.name, ap.preamble.id, profile)
        for t in tables:
            state.tables[t.preamble.id].profile = profile


def _table_from_p4info(t: p4info_pb2.Table) -> TableState:
    fields = [MatchFieldInfo(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields]
    scope = p4info_pb2.ActionRef
    return TableState(
        t.preamble.name,
        t.preamble.id,
        fields,
        [a.id for a in t.action_refs],
        t.size,
        is_const=t.is_const_table,
        default_only_actions=frozenset(a.id for a in t.action_refs if a.scope == scope.DEFAULT_ONLY),
        table_only_actions=frozenset(a.id for a in t.action_refs if a.scope == scope.TABLE_ONLY),
        supports_idle_timeout=t.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL,
    )


def _const_field(spec: dict[str, Any] | None, info: MatchFieldInfo) -> tuple[int, int]:
    full = info.full_mask
    if info.kind == RANGE:
        if spec is None:
            return (0, full)
        if "low" in spec:
            return (int(spec["low"]) & full, int(spec["high"]) & full)
        value = int(spec["value"]) & full
        return (value, value)
    if spec is None:
        return (0, 0)
    if "prefix_len" in spec:
        plen = int(spec["prefix_len"])
        mask = (full >> (info.bitwidth - plen)) << (info.bitwidth - plen) if plen else 0
    elif "mask" in spec:
        mask = int(spec["mask"]) & full
    else:
        mask = full
    return (int(spec["value"]) & mask, mask)


def _named_type_width(name: str, p4info: p4info_pb2.P4Info) -> int:
    new_type = p4info.type_info.new_types.get(name)
    if new_type is not None and new_type.HasField("translated_type"):
        return int(new_type.translated_type.sdn_bitwidth)
    if new_type is not None and new_type.HasField("original_type"):
        return _bitwidth(new_type.original_type, p4info)
    enum = p4info.type_info.serializable_enums.get(name)
    if enum is not None:
        return int(enum.underlying_type.bitwidth)
    return 0


def _bitwidth(spec: Any, p4info: p4info_pb2.P4Info) -> int:
    """Width of a bitstring-like P4DataTypeSpec (bit<W>, int<W>, bool, serializable enum, new type)."""
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        bs = spec.bitstring
        which = bs.WhichOneof("type_spec")
        return int(getattr(bs, which).bitwidth) if which else 0
    if kind == "bool":
        return 1
    if kind == "serializable_enum":
        return _named_type_width(spec.serializable_enum.name, p4info)
    if kind == "new_type":
        return _named_type_width(spec.new_type.name, p4info)
    if kind == "struct":
        return sum(_member_bitwidths(spec, p4info))
    if kind == "header":
        header = p4info.type_info.headers.get(spec.header.name)
        return sum(int(m.type_spec.bitwidth) for m in header.members) if header is not None else 0
    return 0


def _member_bitwidths(spec: Any, p4info: p4info_pb2.P4Info) -> list[int]:
    """Widths of a digest's members: a struct's fields (flattened one level), or the one bitstring."""
    kind = spec.WhichOneof("type_spec")
    if kind == "struct":
        struct = p4info.type_info.structs.get(spec.struct.name)
        if struct is None:
            return []
        return [_bitwidth(m.type_spec, p4info) for m in struct.members]
    if kind == "tuple":
        return [_bitwidth(m, p4info) for m in spec.tuple.members]
    return [_bitwidth(spec, p4info)]
