"""Priorities of a table's initial entries, as p4c's front end assigns them (frontends/p4/entryPriorities.cpp),
turned into the runtime's "larger wins" order.

P4_16 (14.2.1.4): `largest_priority_wins` (default true) says which end of the priority range wins and
`priority_delta` (default 1) the step between consecutive entries. Without any `priority =`, entries get 1, 2, ...
so that the first one in source order wins. With some, the first entry must have one; each entry without one
takes the previous entry's priority minus the delta (largest wins) or plus it (smallest wins). Only keys with a
ternary, range or optional field use priorities at all. p4c refuses priorities on `const entries`; we accept them
(earlier corpus programs rely on it) and apply the same rules. The older `@priority(N)` annotation is what p4c's
BMv2 back end honours when no entry uses `priority =` (see `_annotated_priorities`).

The runtime always lets the larger priority win (as P4Runtime does), so with `largest_priority_wins = false` the
priorities given to it are mirrored: `max + 1 - p`, which keeps their order reversed and every value >= 1.
"""

from __future__ import annotations

from collections.abc import Callable

from p4switch.frontend import ast


class PriorityError(Exception):
    """A priority rule p4c enforces; `node` locates it."""

    def __init__(self, node: ast.Node, message: str) -> None:
        super().__init__(message)
        self.node = node


def _property(table: ast.TableDeclaration, name: str) -> ast.TableProperty | None:
    return next((p for p in table.properties if p.name == name), None)


def entry_priorities(table: ast.TableDeclaration, entries: ast.EntriesProperty,
                     const_of: Callable[[ast.Expression], object]) -> list[int | None]:
    """One runtime priority per entry, or None everywhere when the source order alone decides (the runtime's
    default: the first entry wins). `const_of` gives a constant expression's folded value."""
    explicit = [e.priority is not None for e in entries.entries]
    largest_wins = True
    prop = _property(table, "largest_priority_wins")
    if prop is not None and prop.value is not None:
        value = const_of(prop.value)
        if not isinstance(value, bool):
            raise PriorityError(prop, "largest_priority_wins must be a boolean constant")
        largest_wins = value
    delta = 1
    prop = _property(table, "priority_delta")
    if prop is not None and prop.value is not None:
        value = const_of(prop.value)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise PriorityError(prop, "priority_delta must be a positive constant")
        delta = value
    if not any(explicit):
        return _annotated_priorities(entries)
    priorities: list[int] = []
    current = 0
    for i, entry in enumerate(entries.entries):
        if entry.priority is not None:
            value = const_of(entry.priority)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise PriorityError(entry.priority, "an entry priority must be a non-negative constant")
            current = value
        elif i == 0:
            raise PriorityError(entry, "the first entry must have a priority when others have one")
        priorities.append(current)
        current = current - delta if largest_wins else current + delta
        if current < 0:  # p4c computes the next priority after every entry, the last one included
            raise PriorityError(entry, "overflow in priority computation (priority_delta too large)")
    if largest_wins:
        return list(priorities)
    top = max(priorities)
    return [top + 1 - p for p in priorities]


def _annotated_priorities(entries: ast.EntriesProperty) -> list[int | None]:
    """`@priority(N)` on entries (no `priority =` anywhere): p4c's BMv2 back end writes N as the entry's BMv2
    priority, and every other entry its position counted from 1; in BMv2 the smaller value wins. (p4c's P4Runtime
    side ignores the annotation, with a deprecation warning.) None everywhere when no entry has one."""
    values: list[int] = []
    annotated = False
    for position, entry in enumerate(entries.entries, 1):
        ann = next((a for a in entry.annotations if a.name == "priority"), None)
        if ann is None:
            values.append(position)
            continue
        arg = ann.args[0] if ann.args and len(ann.args) == 1 else None
        if not isinstance(arg, ast.IntLiteral):
            raise PriorityError(ann, "invalid @priority value: it must be one integer constant")
        values.append(arg.value)
        annotated = True
    if not annotated:
        return [None] * len(values)  # 1..n from the winning end: the first entry wins
    top = max(values)
    return [top + 1 - v for v in values]
