"""Exact tables look up through their index dict's own `__getitem__` (`state._ExactResults`): random inserts,
modifies, deletes, clears and default changes, each followed by lookups of every key seen, against a plain model
(a dict of match -> (action, args), and the default): what BMv2's exact match does."""

from __future__ import annotations

import random

from p4switch.runtime.state import EXACT, MatchFieldInfo, TableState


def _table(idle: bool) -> TableState:
    fields = [MatchFieldInfo(1, "a", 8, EXACT), MatchFieldInfo(2, "b", 4, EXACT)]
    return TableState("t", 1, fields, [10, 11, 12], 0, supports_idle_timeout=idle)


def _check(t: TableState, model: dict[tuple[int, int], tuple[int, tuple[int, ...]]],
           default: tuple[int, tuple[int, ...]], keys: list[tuple[int, int]]) -> None:
    for key in keys:
        hit, action, args, entry = t.lookup(key)
        if key in model:
            assert (hit, action, args) == (True, *model[key]), key
            assert entry is not None and entry.match == ((key[0], 0xFF), (key[1], 0xF))
        else:
            assert (hit, action, args, entry) == (False, *default, None), key


def test_exact_lookups_follow_every_change_of_the_table() -> None:
    for idle in (False, True):
        rng = random.Random(7 if idle else 3)
        t = _table(idle)
        model: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = {}
        default: tuple[int, tuple[int, ...]] = (0, ())
        keys = [(rng.randrange(8), rng.randrange(4)) for _ in range(12)]
        for _ in range(400):
            op = rng.random()
            key = rng.choice(keys)
            match = ((key[0], 0xFF), (key[1], 0xF))
            action, args = rng.choice((10, 11, 12)), (rng.randrange(1000),)
            if op < 0.35 and key not in model:
                t.insert(t.new_entry(match, 0, action, args))
                model[key] = (action, args)
            elif op < 0.55 and key in model:
                t.modify(match, 0, action, args)
                model[key] = (action, args)
            elif op < 0.75 and key in model:
                t.delete(match, 0)
                del model[key]
            elif op < 0.85:
                t.set_default(action, args)
                default = (action, args)
            elif op < 0.88:
                t.clear()
                model.clear()
            _check(t, model, default, keys)
