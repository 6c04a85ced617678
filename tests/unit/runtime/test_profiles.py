"""ProfileState against BMv2's and PI's documented rules: handles (bm_sim HandleMgr: the lowest free number),
selection (PI's group_selection.cpp: `hash % n` over the active handles in ascending order) and weights (PI's
action_prof_mgr.cpp: a member of weight w is w handles, copies created when needed and purged when unused)."""

from __future__ import annotations

import pytest
from google.rpc import code_pb2

from p4switch.runtime.profiles import ProfileState
from p4switch.runtime.state import RuntimeStateError

A = 7  # an action id of the profile's table


def profile(max_group_size: int = 0) -> ProfileState:
    return ProfileState("I.sel", 0x11000001, 16, True, max_group_size, frozenset({A}))


def ports(p: ProfileState, group_id: int, n: int) -> list[int]:
    return [p.select(group_id, h)[1][0] for h in range(n)]


def test_a_deleted_members_handle_is_reused_first() -> None:
    p = profile()
    for member_id, port in ((1, 11), (2, 12), (3, 13)):
        p.insert_member(member_id, A, (port,))
    p.delete_member(2)  # frees handle 1
    p.insert_member(4, A, (14,))  # takes handle 1, before member 3's handle 2
    p.write_group(True, 9, 0, [(3, 1), (1, 1), (4, 1)])
    assert ports(p, 9, 6) == [11, 14, 13, 11, 14, 13]


def test_weighted_copies_come_after_existing_handles_and_are_purged() -> None:
    p = profile()
    p.insert_member(1, A, (11,))  # handle 0
    p.insert_member(2, A, (12,))  # handle 1
    p.write_group(True, 9, 0, [(1, 3), (2, 1)])  # member 1's copies: handles 2 and 3
    assert ports(p, 9, 4) == [11, 12, 11, 11]
    p.write_group(False, 9, 0, [(1, 1), (2, 1)])  # copies deleted: handles 2 and 3 free again
    assert ports(p, 9, 2) == [11, 12]
    p.insert_member(3, A, (13,))
    assert p.members[3].handles == [2]


def test_group_limits_and_refusals() -> None:
    p = profile(max_group_size=2)
    p.insert_member(1, A, (11,))
    with pytest.raises(RuntimeStateError) as exc:
        p.write_group(True, 9, 0, [(1, 3)])
    assert exc.value.code == code_pb2.RESOURCE_EXHAUSTED
    with pytest.raises(RuntimeStateError) as exc:
        p.write_group(True, 9, 3, [(1, 1)])  # max_size above the P4Info's max_group_size
    assert exc.value.code == code_pb2.INVALID_ARGUMENT
    p.write_group(True, 9, 0, [(1, 1)])
    with pytest.raises(RuntimeStateError) as exc:
        p.delete_member(1)  # still in group 9
    assert exc.value.code == code_pb2.UNKNOWN
    p.write_group(False, 9, 0, [])
    assert p.select(9, 12345) == (0, ())  # an empty group runs no action
    p.delete_member(1)


def test_one_shot_and_manual_do_not_mix() -> None:
    p = profile()
    key = p.create_oneshot([(A, (21,), 1), (A, (22,), 2)])
    assert [p.select(key, h)[1][0] for h in range(3)] == [21, 22, 22]
    with pytest.raises(RuntimeStateError) as exc:
        p.insert_member(1, A, (11,))
    assert exc.value.code == code_pb2.INVALID_ARGUMENT
    p.delete_oneshot(key)
    p.insert_member(1, A, (11,))  # empty again: manual programming is allowed
    assert p.members[1].handles == [0]
