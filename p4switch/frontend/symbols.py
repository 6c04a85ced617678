"""Control-plane names and ids, computed once as p4c does.

P4Runtime ids carry the object kind in the top byte and the low 24 bits of the Jenkins one-at-a-time hash of the
fully-qualified name below it; collisions are resolved by linear probing with names taken in sorted order, after
`@id`-assigned ids are reserved. Aliases are the shortest unique dot-separated suffix among all symbols.
Matching p4c exactly lets a controller written against BMv2 use our P4Info unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class IdPrefix(IntEnum):
    """P4Runtime's resource-type prefixes (p4runtime/proto/p4/config/v1/p4types, p4c's P4RuntimeSymbolType)."""

    ACTION = 0x01
    TABLE = 0x02
    VALUE_SET = 0x03
    CONTROLLER_HEADER = 0x04
    ACTION_PROFILE = 0x11
    COUNTER = 0x12
    DIRECT_COUNTER = 0x13
    METER = 0x14
    DIRECT_METER = 0x15
    REGISTER = 0x16
    DIGEST = 0x17


def jenkins_one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' one-at-a-time hash on 32 bits (the function p4c uses for P4Runtime ids)."""
    h = 0
    for byte in data:
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


class SymbolError(ValueError):
    """Two declarations claim the same id, or an `@id` has another kind's prefix."""


@dataclass
class _SuffixNode:
    instances: int = 0
    edges: dict[str, _SuffixNode] = field(default_factory=dict)


class SymbolTable:
    """Collects (kind, name, optional @id) symbols, then assigns ids and aliases like p4c's P4RuntimeSymbolTable."""

    def __init__(self) -> None:
        self._tables: dict[IdPrefix, dict[str, int | None]] = {}
        self._assigned: set[int] = set()
        self._suffix_root = _SuffixNode()
        self._suffix_symbols: set[str] = set()
        self._computed = False

    def add(self, kind: IdPrefix, name: str, explicit_id: int | None = None) -> None:
        table = self._tables.setdefault(kind, {})
        if name in table:
            return
        if explicit_id is not None:
            explicit_id = self._check_explicit(kind, name, explicit_id)
        table[name] = explicit_id
        self._add_suffix(name)

    def _check_explicit(self, kind: IdPrefix, name: str, value: int) -> int:
        prefix = int(kind) << 24
        if value & 0xFF000000 and value & 0xFF000000 != prefix:
            raise SymbolError(f"{name}: @id has the wrong 8-bit prefix")
        value |= prefix
        if value in self._assigned:
            raise SymbolError(f"@id {value} is assigned to multiple declarations")
        self._assigned.add(value)
        return value

    def _add_suffix(self, name: str) -> None:
        if name in self._suffix_symbols:
            return
        self._suffix_symbols.add(name)
        node = self._suffix_root
        for part in reversed(name.split(".")):
            node = node.edges.setdefault(part, _SuffixNode())
            node.instances += 1

    def compute_ids(self) -> None:
        """Give every symbol without `@id` its hashed id (sorted names, linear probing)."""
        for kind in sorted(self._tables):
            table = self._tables[kind]
            for name in sorted(n for n, v in table.items() if v is None):
                h = jenkins_one_at_a_time(name.encode())
                while True:
                    candidate = (int(kind) << 24) | (h & 0xFFFFFF)
                    if candidate not in self._assigned:
                        break
                    h = (h + 1) & 0xFFFFFFFF
                self._assigned.add(candidate)
                table[name] = candidate
        self._computed = True

    def id_of(self, kind: IdPrefix, name: str) -> int:
        if not self._computed:
            self.compute_ids()
        value = self._tables[kind][name]
        assert value is not None
        return value

    def has(self, kind: IdPrefix, name: str) -> bool:
        return name in self._tables.get(kind, {})

    def alias(self, name: str) -> str:
        parts = name.split(".")
        node = self._suffix_root
        needed = 0
        for part in reversed(parts):
            node = node.edges[part]
            needed += 1
            if node.instances < 2:
                break
        return ".".join(parts[len(parts) - needed:])
