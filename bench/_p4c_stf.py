"""p4c's .stf packet tests as p4c's BMv2 runner reads them, applied to the embedded switch.

The rules are those of p4c's `backends/bmv2/bmv2stf.py` (and its `stf_parser.py` grammar), so that a sample passes
here exactly when its .stf would pass under p4c's runner with our switch in simple_switch's place:
- Commands run in file order; `#` starts a comment; hex data may be split by spaces.
- `add TABLE [PRIO] KEY:VALUE ... ACTION(ARG:VALUE, ...) [= HANDLE]`, `setdefault TABLE ACTION(...)`: names
  resolve exactly or as a unique suffix (tables, a table's actions; keys also as `.KEY`, `$N` for `[N]`,
  `$valid$`/`.valid` for `.isValid()`). A ternary value's mask covers the digits written (`0x0a` -> `&&& 0xff`,
  `*` digits -> mask 0); an lpm value without `/len` is a prefix of the digits written; an exact key left out is
  0, a ternary or lpm key left out matches anything. STF priorities: the larger wins (bmv2stf hands BMv2
  `10000 - prio`, and BMv2's smaller priority value wins).
- `mirroring_add SESSION PORT`, `mc_mgrp_create GID`, `mc_node_create RID PORT...` (handles from 0),
  `mc_node_associate GID HANDLE`, `check_counter NAME(INDEX) [packets|bytes OP N]`, `wait` (a no-op here: every
  packet runs to completion before the next command).
- `packet PORT HEX`: an odd number of digits ends in a one-digit byte, as bmv2stf's `HexToByte` reads it.
- `expect PORT HEX`: the port's packets, in order, must match one for one and be as many; `*` matches any nibble;
  a received packet may be longer than the expectation unless it ends with `$`. `expect PORT` alone: any packets
  on that port. Only ports named by `packet` or `expect` exist (bmv2stf opens exactly those): output to any
  other port is dropped, as by BMv2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4.config.v1 import p4info_pb2

_MT = p4info_pb2.MatchField

#: bmv2stf's command keywords; anything else is reported (bmv2stf itself skips unknown commands silently).
COMMANDS = frozenset({"add", "setdefault", "packet", "expect", "wait", "mirroring_add", "mc_mgrp_create",
                      "mc_node_create", "mc_node_associate", "check_counter", "remove", "no_packet"})


class StfError(Exception):
    """A command the harness cannot apply to this program (unknown name, bad value, rejected write)."""


@dataclass(frozen=True)
class Expectation:
    """An expected packet: hex nibbles (`*` for any), and whether the packet must end there (`$`)."""

    nibbles: str
    exact_length: bool = False

    def mismatch(self, data: bytes) -> str | None:
        """Why `data` does not match (p4c's wording), or None."""
        got = data.hex()
        if len(got) < len(self.nibbles):
            return f"Received packet too short {len(got)} vs {len(self.nibbles)}"
        for i, (w, g) in enumerate(zip(self.nibbles, got, strict=False)):
            if w not in ("*", g):
                return f"Packet different at position {i}: expected {w}, received {g}"
        if self.exact_length and len(got) > len(self.nibbles):
            return f"Received packet too long {len(got)} vs {len(self.nibbles)}"
        return None


@dataclass(frozen=True)
class Command:
    """One .stf line: its keyword, the rest of the line and its line number."""

    kind: str
    text: str
    line: int


@dataclass
class StfTest:
    commands: list[Command] = field(default_factory=list)

    @property
    def ports(self) -> list[int]:
        """The interfaces bmv2stf opens: every port named by `packet` or `expect`."""
        return sorted({int(c.text.split()[0]) for c in self.commands if c.kind in ("packet", "expect")})

    def expectations(self) -> tuple[dict[int, list[Expectation]], set[int]]:
        """Expected packets per port, and the ports where any output is fine (`expect PORT` with no data)."""
        expects: dict[int, list[Expectation]] = {}
        anything: set[int] = set()
        for c in self.commands:
            if c.kind != "expect":
                continue
            port, data = _port_and_data(c)
            if not data:
                anything.add(port)
                continue
            exact = data.endswith("$")
            expects.setdefault(port, []).append(Expectation(data.rstrip("$"), exact))
        return expects, anything


def _port_and_data(c: Command) -> tuple[int, str]:
    words = c.text.split()
    if not words or not words[0].isdigit():
        raise StfError(f"line {c.line}: {c.kind} needs a port number")
    data = "".join(words[1:]).lower()
    body = data[:-1] if data.endswith("$") else data
    allowed = "0123456789abcdef" + ("*" if c.kind == "expect" else "")
    if any(ch not in allowed for ch in body):
        raise StfError(f"line {c.line}: bad packet data {data!r}")
    return int(words[0]), data


def packet_bytes(data: str) -> bytes:
    """bmv2stf's `HexToByte`: pairs of digits, a lone last digit is a byte of its own (`...20 0` ends 0x20 0x00)."""
    return bytes(int(data[i:i + 2], 16) for i in range(0, len(data), 2))


def parse_stf(text: str) -> StfTest:
    test = StfTest()
    for line_no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        first, _, rest = line.partition(" ")
        kind = first.lower()
        if kind not in COMMANDS:
            raise StfError(f"line {line_no}: unknown stf command {first!r}")
        command = Command(kind, rest.strip(), line_no)
        if kind in ("packet", "expect"):
            _port_and_data(command)  # validated now, so a bad file fails before anything runs
        test.commands.append(command)
    return test


def compare_outputs(test: StfTest, outputs: dict[int, list[bytes]]) -> str | None:
    """p4c's `checkOutputs`: the first problem found, port by port in ascending order, or None."""
    expects, anything = test.expectations()
    for port in test.ports:
        if port in anything:
            continue
        got, want = outputs.get(port, []), expects.get(port, [])
        if len(got) != len(want):
            return f"Expected {len(want)} packets on port {port} got {len(got)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            why = w.mismatch(g)
            if why:
                return f"Packet {i} on port {port} differs: {why} (received {g.hex()})"
    return None


# -- values -------------------------------------------------------------------------------------------------------
_DIGIT_BITS = {"0x": 4, "0b": 1, "0o": 3}


def parse_number(text: str) -> int:
    """An STF number: decimal, 0x, 0b or 0o (no `*`)."""
    try:
        return int(text, 0) if text[:2].lower() in _DIGIT_BITS else int(text, 10)
    except ValueError:
        raise StfError(f"bad number {text!r}") from None


def ternary(text: str) -> tuple[int, int]:
    """bmv2stf's `makeMask`: each digit written is matched (mask all ones), `*` digits are not."""
    prefix = text[:2].lower()
    if "&&&" in text:
        value_text, mask_text = text.split("&&&", 1)
        return parse_number(value_text), parse_number(mask_text)
    if prefix not in _DIGIT_BITS:
        raise StfError(f"Decimal value {text} not supported for ternary key")
    bits, digits = _DIGIT_BITS[prefix], text[2:]
    value = mask = 0
    for d in digits:
        value <<= bits
        mask <<= bits
        if d != "*":
            value |= int(d, 16 if bits == 4 else 8 if bits == 3 else 2)
            mask |= (1 << bits) - 1
    return value, mask


def lpm(text: str) -> tuple[int, int]:
    """`value/len`, or bmv2stf's `makeLpm`: the prefix covers the digits written (`*` digits excluded)."""
    if "/" in text:
        value, plen = text.split("/", 1)
        return parse_number(value), parse_number(plen)
    prefix = text[:2].lower()
    if prefix not in _DIGIT_BITS:
        text = hex(int(text))
        prefix = "0x"
    digits = text[2:]
    return parse_number(text[:2] + digits.replace("*", "0")), (len(digits) - digits.count("*")) * _DIGIT_BITS[prefix]


# -- applying commands --------------------------------------------------------------------------------------------
def _by_suffix(names: list[str], wanted: str, what: str) -> str:
    if wanted in names:
        return wanted
    hits = [n for n in names if n.endswith(wanted)]
    if len(hits) > 1:
        raise StfError(f"{what} name {wanted} is ambiguous: {', '.join(hits)}")
    if not hits:
        raise StfError(f"Could not find {what} {wanted}")
    return hits[0]


def _key_name(names: list[str], key: str) -> str:
    """bmv2stf's `TableKeyInstance.set` name rules, over P4Info match-field names."""
    key = re.sub(r"\$([0-9]+)", r"[\1]", key)
    candidates = [key, key + "$", key.replace("$valid$", "isValid()"), key.replace(".$valid", ".isValid()"),
                  key + ".isValid()"]
    if key.endswith(".valid"):
        candidates.append(key[:-len("valid")] + "isValid()")
    for c in candidates:
        if c in names:
            return c
    for n in names:
        if n.endswith("." + key) or n.endswith("." + key + "$"):
            return n
        if key == "valid" and n.endswith(".isValid()"):
            return n
    raise StfError(f"Unexpected key field {key}")


def split_action(text: str) -> tuple[str, list[tuple[str, str]], str]:
    """`NAME(a:1, b:2) [= HANDLE]` -> name, args, text before the action (the keys)."""
    m = re.search(r"(\S+)\s*\((.*)\)\s*(=\s*\S+)?\s*$", text)
    if not m:
        raise StfError(f"no action in {text!r}")
    args: list[tuple[str, str]] = []
    for part in m.group(2).split(","):
        if part.strip():
            k, sep, v = part.partition(":")
            if not sep:
                raise StfError(f"bad action argument {part.strip()!r}")
            args.append((k.strip(), v.strip()))
    return m.group(1), args, text[:m.start()]


class StfApplier:
    """Turns control-plane commands into P4Runtime writes on a pipeline's runtime state (as a controller would)."""

    def __init__(self, p4info: Any, state: Any) -> None:
        from p4switch.runtime.entries import EntityCodec

        self.p4info = p4info
        self.codec = EntityCodec(state)
        self.tables = {t.preamble.name: t for t in p4info.tables}
        self.actions = {a.preamble.id: a for a in p4info.actions}
        self.mc_nodes: list[tuple[int, list[int]]] = []
        self.mc_groups: dict[int, list[tuple[int, int]]] = {}
        self.handles: dict[str, tuple[Any, Any]] = {}

    def apply(self, c: Command) -> None:
        from p4switch.exceptions import P4SwitchError

        handler = getattr(self, "_" + c.kind, None)
        if handler is None:
            raise StfError(f"line {c.line}: stf command {c.kind!r} is not supported by this harness")
        try:
            handler(c.text)
        except P4SwitchError as exc:
            raise StfError(f"line {c.line}: {c.kind} rejected: {exc}") from None
        except StfError as exc:
            raise StfError(f"line {c.line}: {exc}") from None

    def _write(self, update: str, entity: Any) -> None:
        from p4.v1 import p4runtime_pb2

        self.codec.write(getattr(p4runtime_pb2.Update, update), entity)

    def _wait(self, text: str) -> None:
        """Packets run to completion in file mode: nothing to wait for."""

    def _no_packet(self, text: str) -> None:
        """`no_packet` is an `expect` with nothing to check (stf_parser)."""

    def _action(self, table: Any, name: str, args: list[tuple[str, str]], target: Any) -> None:
        from p4switch.runtime.entries import encode_bytes

        by_name = {self.actions[r.id].preamble.name: self.actions[r.id] for r in table.action_refs}
        action = by_name[_by_suffix(sorted(by_name), name, "action")]
        target.action_id = action.preamble.id
        given = dict(args)
        for p in action.params:
            if p.name not in given:
                raise StfError(f"action {action.preamble.name}: no value for parameter {p.name}")
            target.params.add(param_id=p.id, value=encode_bytes(parse_number(given.pop(p.name))))
        if given:
            raise StfError(f"Unexpected action arg {', '.join(given)}")

    def _table(self, name: str) -> Any:
        return self.tables[_by_suffix(sorted(self.tables), name, "table")]

    def _add(self, text: str) -> None:
        from p4.v1 import p4runtime_pb2

        from p4switch.runtime.entries import encode_bytes

        name, _, rest = text.partition(" ")
        table = self._table(name)
        handle = re.search(r"=\s*(\S+)\s*$", rest)
        action, args, keys_text = split_action(rest)
        words = keys_text.split()
        prio: int | None = None
        if words and words[0].isdigit():
            prio = int(words.pop(0))
        entity = p4runtime_pb2.Entity()
        te = entity.table_entry
        te.table_id = table.preamble.id
        fields = {f.name: f for f in table.match_fields}
        given: dict[str, str] = {}
        for w in words:
            k, sep, key_value = w.partition(":")
            if not sep:
                raise StfError(f"bad key {w!r}")
            given[_key_name(sorted(fields), k)] = key_value
        kinds = {f.match_type for f in table.match_fields}
        for f in table.match_fields:
            kind = _MATCH_KINDS.get(f.match_type, "other")
            width_mask = (1 << f.bitwidth) - 1
            v = given.get(f.name)
            if kind == "exact":
                fm = te.match.add(field_id=f.id)
                fm.exact.value = encode_bytes(parse_number(v) if v is not None else 0)
            elif kind == "optional" and v is not None:
                te.match.add(field_id=f.id).optional.value = encode_bytes(parse_number(v))
            elif kind == "ternary" and v is not None:
                value, mask = ternary(v)
                mask &= width_mask
                if mask:
                    fm = te.match.add(field_id=f.id)
                    fm.ternary.value, fm.ternary.mask = encode_bytes(value & mask), encode_bytes(mask)
            elif kind == "lpm" and v is not None:
                value, plen = lpm(v)
                if plen:
                    mask = (width_mask >> max(f.bitwidth - plen, 0)) << max(f.bitwidth - plen, 0)
                    fm = te.match.add(field_id=f.id)
                    fm.lpm.value, fm.lpm.prefix_len = encode_bytes(value & mask), plen
            elif v is not None:
                raise StfError(f"key {f.name}: match kind {kind} cannot be written in an stf file")
        if kinds & _PRIORITY_KINDS:
            te.priority = (prio if prio is not None else 0) + 1  # P4Runtime priorities start at 1
        self._action(table, action, args, te.action.action)
        self._write("INSERT", entity)
        if handle:
            self.handles[handle.group(1)] = (table, entity)

    def _setdefault(self, text: str) -> None:
        from p4.v1 import p4runtime_pb2

        name, _, rest = text.partition(" ")
        table = self._table(name)
        action, args, extra = split_action(rest)
        if extra.strip():
            raise StfError(f"unexpected {extra.strip()!r} before the action")
        entity = p4runtime_pb2.Entity()
        te = entity.table_entry
        te.table_id, te.is_default_action = table.preamble.id, True
        self._action(table, action, args, te.action.action)
        self._write("MODIFY", entity)

    def _mirroring_add(self, text: str) -> None:
        from p4.v1 import p4runtime_pb2

        session, port = (parse_number(w) for w in _words(text, 2))
        entity = p4runtime_pb2.Entity()
        clone = entity.packet_replication_engine_entry.clone_session_entry
        clone.session_id = session
        clone.replicas.add(egress_port=port, instance=0)
        self._write("INSERT", entity)

    def _mc_mgrp_create(self, text: str) -> None:
        (gid,) = (parse_number(w) for w in _words(text, 1))
        self.mc_groups[gid] = []
        self._write_group(gid, "INSERT")

    def _mc_node_create(self, text: str) -> None:
        words = text.split()
        if len(words) < 2:
            raise StfError("mc_node_create needs RID and ports")
        self.mc_nodes.append((parse_number(words[0]), [parse_number(w) for w in words[1:]]))

    def _mc_node_associate(self, text: str) -> None:
        gid, node = (parse_number(w) for w in _words(text, 2))
        if gid not in self.mc_groups or node >= len(self.mc_nodes):
            raise StfError(f"mc_node_associate {gid} {node}: no such group or node")
        rid, ports = self.mc_nodes[node]
        self.mc_groups[gid].extend((port, rid) for port in ports)
        self._write_group(gid, "MODIFY")

    def _write_group(self, gid: int, update: str) -> None:
        from p4.v1 import p4runtime_pb2

        entity = p4runtime_pb2.Entity()
        group = entity.packet_replication_engine_entry.multicast_group_entry
        group.multicast_group_id = gid
        for port, rid in self.mc_groups[gid]:
            group.replicas.add(egress_port=port, instance=rid)
        self._write(update, entity)

    def _check_counter(self, text: str) -> None:
        from p4.v1 import p4runtime_pb2

        m = re.fullmatch(r"(\S+)\s*\(\s*(\S+)\s*\)\s*(?:(packets|bytes)\s*(==|!=|<=|<|>=|>)\s*(\S+))?", text)
        if not m:
            raise StfError(f"bad check_counter {text!r}")
        name, index, unit, op, number = m.groups()
        counters = {c.preamble.name: c for c in self.p4info.counters}
        directs = {c.preamble.name: c for c in self.p4info.direct_counters}
        entity = p4runtime_pb2.Entity()
        if index.startswith("$"):
            if index[1:] not in self.handles:
                raise StfError(f"no entry handle {index[1:]}")
            _by_suffix(sorted(directs), name, "direct counter")  # the name must exist
            _, added = self.handles[index[1:]]
            entity.direct_counter_entry.table_entry.CopyFrom(added.table_entry)
            entity.direct_counter_entry.table_entry.ClearField("action")
        else:
            counter = counters[_by_suffix(sorted(counters), name, "counter")]
            entity.counter_entry.counter_id = counter.preamble.id
            entity.counter_entry.index.index = parse_number(index)
        read = self.codec.read(entity)
        if not read:
            raise StfError(f"counter {name}({index}) not found")
        data = read[0].counter_entry.data if index[0] != "$" else read[0].direct_counter_entry.data
        got = data.byte_count if unit == "bytes" else data.packet_count
        want = parse_number(number) if number else 0
        ok = {"==": got == want, "!=": got != want, "<=": got <= want, "<": got < want, ">=": got >= want,
              ">": got > want}[op or "=="]
        if not ok:
            raise StfError(f"counter {name}({index}) {unit or 'packets'} is {got}, expected {op or '=='} {want}")


def _words(text: str, n: int) -> list[str]:
    words = text.split()
    if len(words) != n:
        raise StfError(f"expected {n} arguments, got {text!r}")
    return words


_MATCH_KINDS = {_MT.EXACT: "exact", _MT.LPM: "lpm", _MT.TERNARY: "ternary", _MT.RANGE: "range",
                _MT.OPTIONAL: "optional"}
_PRIORITY_KINDS = {_MT.TERNARY, _MT.RANGE, _MT.OPTIONAL}  # P4Runtime: entries of such tables carry a priority


@dataclass
class StfRun:
    """What one .stf run produced: the output frames per opened port, and the first command that failed."""

    outputs: dict[int, list[bytes]]
    command_error: str | None = None


def run_stf(compiled: Any, test: StfTest, *, seed: int = 1, watch: tuple[int, ...] = ()) -> StfRun:
    """Every command in order on a fresh embedded switch in file mode; each packet runs to completion. The ports
    the .stf names are open, as bmv2stf opens them, and so are `watch` (a stricter check sees what leaves there)."""
    from p4switch.switch.filemode import FileModeRunner
    from p4switch.switch.pipeline import build_pipeline

    pipeline = build_pipeline(compiled.p4info, compiled.device_config_bytes(), seed=seed)
    runner = FileModeRunner(pipeline, {p: f"p{p}" for p in sorted({*test.ports, *watch})})
    applier = StfApplier(compiled.p4info, pipeline.state)
    sent = 0
    for c in test.commands:
        if c.kind == "packet":
            port, data = _port_and_data(c)
            runner.process(port, packet_bytes(data), sent)
            sent += 1
        elif c.kind != "expect":
            try:
                applier.apply(c)
            except StfError as exc:
                return StfRun(runner.outputs(), str(exc))
    return StfRun(runner.outputs())


def read_stf(path: Path) -> StfTest:
    return parse_stf(path.read_text())
