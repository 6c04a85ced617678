"""Action profiles and action selectors (v1model `action_profile` / `action_selector`) as simple_switch_grpc runs them.

A profile holds members (an action with its arguments) and, with a selector, groups (a set of members). Table entries
of an indirect table point at a member or a group. Selection follows BMv2 with PI's group selector
(PI targets/bmv2/group_selection.cpp): the selector keys are hashed with the instance's algorithm, then member
`hash % n` of the group's n active member handles in ascending handle order is taken. Handles are BMv2's: the
lowest free number of the profile at creation (bm_sim HandleMgr), so creation order while nothing is deleted.

Weights follow PI's proto front end (action_prof_mgr.cpp): a member of weight w is programmed as w BMv2 members,
the original handle and w-1 copies created when first needed (new handles) and deleted when no group needs them.
A hit on an empty group runs no action (BMv2 MatchTableIndirect's `empty_action`, "yielded empty group").
Refusals carry PI's codes: deleting a member or group still referenced fails on the target, which PI reports as
UNKNOWN ("Error when deleting member on target"); a sum of weights above the group's max size is RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from google.rpc import code_pb2

from p4switch.runtime.state import RuntimeStateError

GROUP_ACTION = -1
"""`action_id` of a table entry that points at a group: the data path then calls `select`."""


@dataclass
class Member:
    id: int
    action_id: int
    args: tuple[int, ...]
    handles: list[int] = field(default_factory=list)  # BMv2 handles: [original, weighted copies...]
    table_refs: int = 0
    groups: set[int] = field(default_factory=set)


@dataclass
class Group:
    id: int
    max_size: int = 0
    weights: dict[int, int] = field(default_factory=dict)  # member id -> weight, in request order
    table_refs: int = 0
    choices: tuple[tuple[int, tuple[int, ...]], ...] = ()  # (action_id, args) per active handle, ascending
    # one-shot groups (P4Runtime action_profile_action_set): (action_id, args, weight) as written, and the
    # BMv2 member handles PI created for them (one per unit of weight)
    actions: list[tuple[int, tuple[int, ...], int]] = field(default_factory=list)
    handles: list[tuple[int, int, tuple[int, ...]]] = field(default_factory=list)  # (handle, action_id, args)


class ProfileState:
    """One action profile or selector: members, groups, BMv2 handles and reference counts."""

    def __init__(self, name: str, id_: int, size: int, with_selector: bool, max_group_size: int,
                 action_ids: frozenset[int]) -> None:
        self.name, self.id, self.size = name, id_, size
        self.with_selector, self.max_group_size = with_selector, max_group_size
        self.action_ids = action_ids  # actions of the tables it implements
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}
        self._handle_owner: dict[int, int] = {}  # BMv2 member handle -> member id
        self._free: list[int] = []
        self._next = 0
        self.mode = ""  # "manual" (members and groups) or "oneshot" (action sets), fixed while not empty (PI)
        self._next_oneshot = 0

    # -- handles -----------------------------------------------------------------------------------------------
    def _new_handle(self, member_id: int) -> int:
        if self._free:
            handle = heapq.heappop(self._free)
        else:
            if self.size and self._next >= self.size:
                raise RuntimeStateError(code_pb2.RESOURCE_EXHAUSTED, f"action profile {self.name} is full")
            handle = self._next
            self._next += 1
        self._handle_owner[handle] = member_id
        return handle

    def _release_handle(self, handle: int) -> None:
        del self._handle_owner[handle]
        heapq.heappush(self._free, handle)

    def use(self, mode: str) -> None:
        """PI's check_selector_usage: a profile programmed one way refuses the other until it is empty."""
        if self.mode == mode:
            return
        if self.mode and (self.members or self.groups):
            raise RuntimeStateError(code_pb2.INVALID_ARGUMENT,
                                    "Invalid attempt to mix action selector programming modes")
        self.mode = mode

    # -- members -----------------------------------------------------------------------------------------------
    def insert_member(self, member_id: int, action_id: int, args: tuple[int, ...]) -> None:
        self.use("manual")
        if member_id in self.members:
            raise RuntimeStateError(code_pb2.ALREADY_EXISTS, f"Duplicate member id: {member_id}")
        member = Member(member_id, action_id, args)
        member.handles.append(self._new_handle(member_id))
        self.members[member_id] = member

    def member(self, member_id: int) -> Member:
        member = self.members.get(member_id)
        if member is None:
            raise RuntimeStateError(code_pb2.NOT_FOUND, f"Member id does not exist: {member_id}")
        return member

    def modify_member(self, member_id: int, action_id: int, args: tuple[int, ...]) -> Member:
        self.use("manual")
        member = self.member(member_id)
        member.action_id, member.args = action_id, args
        for group_id in member.groups:
            self._refresh(self.groups[group_id])
        return member

    def delete_member(self, member_id: int) -> None:
        self.use("manual")
        member = self.member(member_id)
        if member.table_refs or member.groups:
            raise RuntimeStateError(code_pb2.UNKNOWN, f"Error when deleting member on target: member {member_id} "
                                    f"of {self.name} is still used by a table entry or a group")
        for handle in member.handles:
            self._release_handle(handle)
        del self.members[member_id]

    # -- groups ------------------------------------------------------------------------------------------------
    def group(self, group_id: int) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            raise RuntimeStateError(code_pb2.NOT_FOUND, f"Group id does not exist: {group_id}")
        return group

    def write_group(self, insert: bool, group_id: int, max_size: int, weights: list[tuple[int, int]]) -> None:
        """INSERT (`insert`) or MODIFY a group with (member id, weight) pairs, validated as PI does, then applied."""
        if not self.with_selector:
            raise RuntimeStateError(code_pb2.INVALID_ARGUMENT, f"action profile {self.name} has no selector: "
                                    "it has no groups")
        if max_size < 0:
            raise RuntimeStateError(code_pb2.INVALID_ARGUMENT, "Group max_size cannot be less than 0")
        if insert:
            if self.max_group_size and max_size > self.max_group_size:
                raise RuntimeStateError(code_pb2.INVALID_ARGUMENT,
                                        "Group max_size cannot exceed static max_group_size (from P4Info)")
            if group_id in self.groups:
                raise RuntimeStateError(code_pb2.ALREADY_EXISTS, f"Duplicate group id: {group_id}")
            user_max = max_size
        else:
            user_max = self.group(group_id).max_size
            if max_size and max_size != user_max:
                raise RuntimeStateError(code_pb2.INVALID_ARGUMENT, "Cannot change group max_size after group creation")
        self.use("manual")
        if any(w <= 0 for _, w in weights):
            raise RuntimeStateError(code_pb2.INVALID_ARGUMENT, "Member weight must be a positive integer value")
        limit = user_max or self.max_group_size
        if limit and sum(w for _, w in weights) > limit:
            raise RuntimeStateError(code_pb2.RESOURCE_EXHAUSTED, "Sum of member weights exceeds maximum group size")
        new: dict[int, int] = {}
        for member_id, weight in weights:
            self.member(member_id)
            if member_id in new:
                raise RuntimeStateError(code_pb2.INVALID_ARGUMENT,
                                        f"Duplicate member id {member_id} for group {group_id}, use weights instead")
            new[member_id] = weight
        group = self.groups.setdefault(group_id, Group(group_id, user_max))
        old = group.weights
        group.weights = new
        for member_id in set(old) | set(new):
            member = self.members[member_id]
            if member_id in new:
                member.groups.add(group_id)
                while len(member.handles) < new[member_id]:  # PI's create_missing_weighted_members
                    member.handles.append(self._new_handle(member_id))
            else:
                member.groups.discard(group_id)
            self._purge_copies(member)
        self._refresh(group)

    def delete_group(self, group_id: int) -> None:
        self.use("manual")
        group = self.group(group_id)
        if group.table_refs:
            raise RuntimeStateError(code_pb2.UNKNOWN, f"Error when deleting group on target: group {group_id} "
                                    f"of {self.name} is still used by a table entry")
        del self.groups[group_id]
        for member_id in group.weights:
            member = self.members[member_id]
            member.groups.discard(group_id)
            self._purge_copies(member)

    def _purge_copies(self, member: Member) -> None:
        """Delete weighted copies no group needs any more (PI's purge_unused_weighted_members)."""
        needed = max((self.groups[g].weights[member.id] for g in member.groups), default=1)
        while len(member.handles) > needed:
            self._release_handle(member.handles.pop())

    def _refresh(self, group: Group) -> None:
        handles = sorted(h for member_id, weight in group.weights.items()
                         for h in self.members[member_id].handles[:weight])
        members = self.members
        owner = self._handle_owner
        group.choices = tuple((members[owner[h]].action_id, members[owner[h]].args) for h in handles)

    # -- one-shot action sets ----------------------------------------------------------------------------------
    def create_oneshot(self, actions: list[tuple[int, tuple[int, ...], int]]) -> int:
        """The hidden group PI's ActionProfAccessOneshot creates for a table entry's action set: one member per
        unit of weight, in the set's order. Its key is negative, apart from the controller's group ids."""
        if not self.with_selector:
            raise RuntimeStateError(code_pb2.INVALID_ARGUMENT,
                                    f"action profile {self.name} has no selector: no one-shot action sets")
        if not actions:
            raise RuntimeStateError(code_pb2.UNIMPLEMENTED, "No support for empty action profile groups")
        if any(w <= 0 for _, _, w in actions):
            raise RuntimeStateError(code_pb2.INVALID_ARGUMENT, "Member weight must be a positive integer value")
        if self.max_group_size and sum(w for _, _, w in actions) > self.max_group_size:
            raise RuntimeStateError(code_pb2.RESOURCE_EXHAUSTED,
                                    "Sum of weights exceeds static max_group_size (from P4Info)")
        self.use("oneshot")
        self._next_oneshot -= 1
        key = self._next_oneshot
        group = Group(key, actions=list(actions))
        try:
            for action_id, args, weight in actions:
                for _ in range(weight):
                    group.handles.append((self._new_handle(key), action_id, args))
        except RuntimeStateError:
            for handle, _, _ in group.handles:
                self._release_handle(handle)
            raise
        group.choices = tuple((a, g) for _, a, g in sorted(group.handles, key=lambda h: h[0]))
        self.groups[key] = group
        return key

    def delete_oneshot(self, key: int) -> None:
        group = self.groups.pop(key, None)
        if group is not None:
            for handle, _, _ in group.handles:
                self._release_handle(handle)

    # -- data path ---------------------------------------------------------------------------------------------
    def select(self, group_id: int, hash_value: int) -> tuple[int, tuple[int, ...]]:
        """The (action id, args) a packet hashing to `hash_value` runs; (0, ()) (no action) for an empty group."""
        choices = self.groups[group_id].choices
        if not choices:
            return 0, ()
        return choices[hash_value % len(choices)]

    def reset(self) -> None:
        self.members.clear()
        self.groups.clear()
        self._handle_owner.clear()
        self._free.clear()
        self._next = 0
        self.mode = ""
