"""Job lifecycle: admit, compute the tree, install on every switch of it, record, delete, rebuild.

A job's install is all or nothing: entities go to every switch of the tree concurrently; if any switch refuses,
whatever was written is deleted again and the job is refused with that switch's error. Each job records exactly
the entities it installed per switch (P4Runtime text format), so `delete` and a rebuild remove precisely those.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, replace
from typing import Any, Protocol

from google.protobuf import text_format
from p4.v1 import p4runtime_pb2

from controller import bmv2_thrift
from controller.client import SwitchClient, update
from controller.exceptions import ControllerError, JobError, RpcError, SwitchUnavailableError
from controller.fabric import Fabric
from controller.p4info import P4InfoHelper
from controller.plan import QUANT_MODES, MemberInfo, SwitchJobPlan, plan_job
from controller.ranks import rank_order
from controller.resources import Grant, ResourceBook, SwitchResources
from controller.state import ControllerState, JobRecord
from controller.topology import Topology
from controller.trees import ReductionTree, compute_tree, link_load


class Binding(Protocol):
    """How plans become entities of one P4 program (see controller/program.py)."""

    def job_entities(self, helper: P4InfoHelper, plan: SwitchJobPlan,
                     topo: Topology) -> list[p4runtime_pb2.Entity]: ...

    def capacity(self, helper: P4InfoHelper) -> tuple[int, int, int]:
        """(slots, multicast groups, job-table rows) one switch can give to jobs."""
        ...

    def slot_reset_entities(self, helper: P4InfoHelper, slot_base: int,
                            slot_count: int) -> list[p4runtime_pb2.Entity]:
        """Writes (MODIFY) that return a slot range's data-plane state to unused."""
        ...

    def values_per_packet(self, helper: P4InfoHelper) -> int:
        """Values per aggregation packet of the installed pipeline (its build's N), from P4Info."""
        ...


def to_text(e: p4runtime_pb2.Entity) -> str:
    return text_format.MessageToString(e, as_one_line=True)


def from_text(s: str) -> p4runtime_pb2.Entity:
    return text_format.Parse(s, p4runtime_pb2.Entity())


class JobManager:
    """Jobs over one fabric. `state` is the persisted controller state; callers save it afterwards."""

    def __init__(self, topo: Topology, fabric: Fabric, binding: Binding, helper: P4InfoHelper,
                 state: ControllerState) -> None:
        self.topo = topo
        self.fabric = fabric
        self.binding = binding
        self.helper = helper
        self.state = state

    # -- resources --------------------------------------------------------------------------------------------
    def resources(self, exclude: Iterable[int] = ()) -> ResourceBook:
        slots, groups, jobs = self.binding.capacity(self.helper)
        skip = set(exclude)
        book = ResourceBook(SwitchResources.create(sw.name, sw.slots if sw.slots is not None else slots,
                                                   sw.groups if sw.groups is not None else groups, jobs)
                            for sw in self.topo.switches.values())
        for rec in self.state.jobs.values():
            if rec.job_id not in skip:
                book.restore(rec.job_id, rec.grants.values())
        return book

    def _live(self) -> tuple[list[str], list[tuple[str, str]]]:
        return list(self.state.down_switches), [(a, b) for a, b in self.state.down_links]

    def _tree(self, members: list[str], root: str | None, exclude: int | None = None) -> ReductionTree:
        down_sw, down_ln = self._live()
        others = [r.tree for j, r in self.state.jobs.items() if j != exclude]
        return compute_tree(self.topo, members, root=root, link_load=link_load(others),
                            down_switches=down_sw, down_links=down_ln)

    # -- create -----------------------------------------------------------------------------------------------
    def create(self, members: list[str], *, name: str = "", root: str | None = None, quant: str = "int32",
               slots: int = 64, job_id: int | None = None, scale: int = 0,
               worker_ports: dict[str, int] | None = None, values: int | None = None,
               spares: list[str] | None = None) -> JobRecord:
        """`values`: the values per packet the job's workers will pack; None takes the pipeline's N, another N
        than the pipeline's is refused (the switches would drop every packet of the job as BAD_FORMAT)."""
        if quant not in QUANT_MODES:
            raise JobError(f"unknown quantization mode {quant!r} (one of {', '.join(QUANT_MODES)})")
        pipeline_values = self.binding.values_per_packet(self.helper)
        if values is not None and values != pipeline_values:
            raise JobError(f"the job asks for {values} values per packet but the pipeline carries {pipeline_values} "
                           f"(built with -D AGG_VALUES={pipeline_values}): create it with --values {pipeline_values} "
                           "or push a pipeline built for the job's N")
        if slots <= 0:
            raise JobError(f"slot count must be positive, got {slots}")
        if len(set(members)) != len(members):
            raise JobError("a member host is listed twice")
        spares = list(spares or [])
        bad = [h for h in spares if h in members or h not in self.topo.hosts or spares.count(h) > 1]
        if bad:
            raise JobError(f"spare host(s) {', '.join(bad)}: unknown, listed twice or already a member")
        job_id = job_id if job_id is not None else self.state.next_job_id()
        if job_id in self.state.jobs:
            raise JobError(f"job {job_id} already exists")
        if not 0 < job_id < 1 << 16:
            raise JobError(f"job id {job_id} outside 1..65535")
        tree = self._tree(members, root)
        grants = self.resources().admit(job_id, tree.switches, slots)
        ranks = rank_order(tree)
        ports = dict(worker_ports or {})
        plan = plan_job(self.topo, tree, grants, job_id, quant, ranks, scale=scale, worker_ports=ports)
        record = JobRecord(job_id, name or f"job{job_id}", list(members), quant, slots, root, tree, grants, ranks,
                           {sw: p.to_dict() for sw, p in plan.switches.items()}, created=time.time(),
                           scale=scale, worker_ports=ports, workers=[asdict(m) for m in plan.members],
                           values=pipeline_values, spares=spares)
        record.uncleared = self._reset_slots(grants.values())
        record.installed = self._install(plan.switches)
        self.state.jobs[job_id] = record
        return record

    def _reset_updates(self, grants: Iterable[Grant]) -> dict[str, list[p4runtime_pb2.Update]]:
        return {g.switch: [update("MODIFY", e) for e in
                           self.binding.slot_reset_entities(self.helper, g.slot_base, g.slot_count)]
                for g in grants}

    def _reset_slots(self, grants: Iterable[Grant]) -> list[str]:
        """Clear the slot state of freshly granted slots before any entry admits the job's packets there.

        The switch keeps each slot's last round (step, seq) and status, and a deleted job leaves them behind; a
        new job's workers start again at step 0, so without this the switch would drop their packets as stale, or
        answer them with the deleted job's stored RESULT. Initialising what it allocates is the controller's job
        (docs/controller.md, "Jobs"); nothing is installed when a switch refuses. Returns the switches that have
        no P4Runtime register writes (BMv2): their slots stay as they are."""
        resets = self._reset_updates(grants)

        def write(c: SwitchClient) -> bool:
            return self._write_reset(c, resets[c.name])

        out = self.fabric.run(write, resets)
        out.raise_first()
        return sorted(sw for sw, cleared in out.results.items() if not cleared)

    def _write_reset(self, c: SwitchClient, ups: list[p4runtime_pb2.Update]) -> bool:
        """Write slot-state resets. Where P4Runtime has no register writes at all (BMv2's simple_switch_grpc answers
        UNIMPLEMENTED, p4lang/PI#376) they go through the switch's Thrift admin port when the topology names one;
        False when neither can clear them. Any other refusal raises."""
        try:
            c.write(ups)
        except RpcError as exc:
            codes = {u.code_name for u in exc.updates} or {exc.code_name}
            if codes != {"UNIMPLEMENTED"}:
                raise
            address = self.topo.switches[c.name].thrift if c.name in self.topo.switches else ""
            if not address:
                return False
            writes = []
            for u in ups:
                r = u.entity.register_entry
                name = self.helper.registers.by(r.register_id).preamble.name
                writes.append((name, r.index.index, int.from_bytes(r.data.bitstring, "big")))
            try:
                bmv2_thrift.write_registers(address, writes, what=c.name)
            except bmv2_thrift.ThriftCliError as err:
                raise JobError(f"{c.name}: clearing slot registers over Thrift: {err}") from None
        return True

    def _regrant(self, record: JobRecord, members: list[str]) -> tuple[ReductionTree, dict[str, Grant],
                                                                     dict[str, Grant]]:
        """A new tree for `members` on the live topology; switches that stay in it keep their grants, new ones get
        fresh grants (returned apart: their slots need clearing)."""
        job_id = record.job_id
        tree = self._tree(members, None if record.requested_root in self.state.down_switches
                          else record.requested_root, exclude=job_id)
        book = self.resources(exclude=[job_id])
        kept = {sw: g for sw, g in record.grants.items() if sw in tree.parent}
        book.restore(job_id, kept.values())
        fresh = book.admit(job_id, [s for s in tree.switches if s not in kept], record.slots)
        return tree, {**kept, **fresh}, fresh

    def _entities(self, plans: dict[str, SwitchJobPlan]) -> dict[str, list[p4runtime_pb2.Entity]]:
        return {sw: self.binding.job_entities(self.helper, p, self.topo) for sw, p in plans.items()}

    def _install(self, plans: dict[str, SwitchJobPlan]) -> dict[str, list[str]]:
        wanted = self._entities(plans)

        def write(c: SwitchClient) -> None:
            c.write([update("INSERT", e) for e in wanted[c.name]], atomicity="CONTINUE_ON_ERROR")

        out = self.fabric.run(write, wanted)
        if out.errors:
            # undo what went in: everything on switches that succeeded, the updates not reported as failed on a
            # switch that refused some (a refused update may name an entry that is not ours), and on a switch
            # that did not answer, everything (NOT_FOUND is fine there)
            undo: dict[str, list[str]] = {}
            for sw, ents in wanted.items():
                err = out.errors.get(sw)
                failed = {u.index for u in err.updates} if isinstance(err, RpcError) else set()
                undo[sw] = [to_text(e) for i, e in enumerate(ents) if i not in failed]
            self._remove(undo, strict=False)
            out.raise_first()
        return {sw: [to_text(e) for e in ents] for sw, ents in wanted.items()}

    def _remove(self, installed: dict[str, list[str]], *, strict: bool) -> dict[str, ControllerError]:
        """Delete recorded entities (reverse order). NOT_FOUND is fine; unreachable switches are returned."""
        targets = {sw: ents for sw, ents in installed.items() if sw not in self.state.down_switches}

        def delete(c: SwitchClient) -> None:
            ups = [update("DELETE", from_text(t)) for t in reversed(targets[c.name])]
            try:
                c.write(ups)
            except RpcError as exc:
                real = [u for u in exc.updates if u.code_name != "NOT_FOUND"]
                if real or not exc.updates:
                    raise

        out = self.fabric.run(delete, targets)
        if strict and out.errors:
            unreachable = {s: e for s, e in out.errors.items() if isinstance(e, SwitchUnavailableError)}
            if len(unreachable) != len(out.errors):
                out.raise_first()
        return out.errors

    # -- delete, list, show -----------------------------------------------------------------------------------
    def get(self, job_id: int) -> JobRecord:
        try:
            return self.state.jobs[job_id]
        except KeyError:
            known = ", ".join(str(j) for j in sorted(self.state.jobs)) or "none"
            raise JobError(f"no job {job_id} (jobs: {known})") from None

    def delete(self, job_id: int) -> tuple[JobRecord, dict[str, ControllerError]]:
        """Remove everything the job installed; returns the switches that could not be reached."""
        record = self.get(job_id)
        missed = self._remove(record.installed, strict=True)
        del self.state.jobs[job_id]
        return record, missed

    def read_back(self, job_id: int) -> dict[str, list[p4runtime_pb2.Entity]]:
        """What the switches hold of this job's intended entities (matched by identity), per switch."""
        record = self.get(job_id)

        def read(c: SwitchClient) -> list[p4runtime_pb2.Entity]:
            found: list[p4runtime_pb2.Entity] = []
            tables: dict[int, list[p4runtime_pb2.Entity]] = {}
            for text in record.installed[c.name]:
                found.extend(_read_one(c, from_text(text), tables))
            return found

        out = self.fabric.run(read, record.installed)
        out.raise_first()
        return out.results

    # -- failures ---------------------------------------------------------------------------------------------
    def affected(self, switch: str | None = None, link: tuple[str, str] | None = None) -> list[int]:
        jobs = []
        for j, rec in sorted(self.state.jobs.items()):
            if switch is not None and switch in rec.tree.parent:
                jobs.append(j)
            elif link is not None and frozenset(link) in rec.tree.links():
                jobs.append(j)
        return jobs

    def rebuild(self, job_id: int) -> JobRecord:
        """Recompute a job's tree on the live topology and move its entities with the fewest changes.

        Switches that stay in the tree keep their grants (slot range, job index, group), so aggregation state in
        flight there survives and only entries that differ are modified; switches that leave the tree lose the
        job's entries (unless down: their state is wiped when they come back); new switches get everything.
        The job keeps its id, members, rank order and slot count.
        """
        record = self.get(job_id)
        tree, grants, fresh = self._regrant(record, record.members)
        plan = plan_job(self.topo, tree, grants, job_id, record.quant, record.ranks, scale=record.scale,
                        worker_ports=record.worker_ports)
        plans, members_info = _stable_child_indices(record.plans, dict(plan.switches), plan.members)
        plan = replace(plan, switches=plans, members=members_info)
        wanted = self._entities(plan.switches)
        old = {sw: [from_text(t) for t in texts] for sw, texts in record.installed.items()
               if sw not in self.state.down_switches}
        changes = {sw: diff_updates(old.get(sw, []), wanted.get(sw, [])) for sw in set(old) | set(wanted)}
        resets = self._reset_updates(fresh.values())

        def write(c: SwitchClient) -> bool:
            # a switch new to the tree: clear its slots before its entries admit packets
            cleared = self._write_reset(c, resets[c.name]) if c.name in resets else True
            c.write(changes[c.name])
            return cleared

        out = self.fabric.run(write, [sw for sw, ups in changes.items() if ups])
        out.raise_first()
        uncleared = {sw for sw, cleared in out.results.items() if not cleared}
        record.uncleared = sorted(uncleared | {sw for sw in record.uncleared if sw in grants and sw not in fresh})
        record.tree, record.grants = tree, grants
        record.plans = {sw: p.to_dict() for sw, p in plan.switches.items()}
        record.workers = [asdict(m) for m in plan.members]
        record.installed = {sw: [to_text(e) for e in ents] for sw, ents in wanted.items()}
        record.status = "active"
        record.rebuilt += 1
        return record

    # -- hot-standby workers ----------------------------------------------------------------------------------
    def replace_member(self, job_id: int, dead: str, spare: str | None = None) -> JobRecord:
        """Move a dead worker's rank to a spare host: entries, tree, rank order and member list.

        A spare on the dead worker's switch takes over the dead worker's child index there (the switch's bitmap
        then counts its packets as the same child's, so a round the dead worker already joined treats the spare's
        resend as a duplicate, and a round it had not joined takes the spare's contribution: exact mid-step). A
        spare elsewhere changes the tree (recomputed as in `rebuild`); that is exact only between collectives, so
        a same-switch spare is chosen first when `spare` is None. All or nothing: if a switch refuses, whatever
        changed is undone and the job record is left as it was. Returns the updated record."""
        record = self.get(job_id)
        if dead not in record.members:
            raise JobError(f"{dead} is not a member of job {job_id} (members: {', '.join(record.members)})")
        spare = spare or self._pick_spare(record, dead)
        if spare in record.members:
            raise JobError(f"{spare} is already a member of job {job_id}")
        if spare not in self.topo.hosts:
            raise JobError(f"unknown host {spare!r}")
        members = [spare if m == dead else m for m in record.members]
        ranks = [spare if m == dead else m for m in record.ranks]
        ports = {(spare if h == dead else h): p for h, p in record.worker_ports.items()}
        same_switch = self.topo.hosts[spare].switch == self.topo.hosts[dead].switch
        if same_switch:
            fresh: dict[str, Grant] = {}
            tree, grants = self._swap_tree(record, dead, spare), dict(record.grants)
        else:
            tree, grants, fresh = self._regrant(record, members)
        plan = plan_job(self.topo, tree, grants, job_id, record.quant, ranks, scale=record.scale, worker_ports=ports)
        plans, members_info = _stable_child_indices(record.plans, dict(plan.switches), plan.members, {dead: spare})
        wanted = self._entities(plans)
        old = {sw: [from_text(t) for t in texts] for sw, texts in record.installed.items()
               if sw not in self.state.down_switches}
        changes = {sw: diff_updates(old.get(sw, []), wanted.get(sw, [])) for sw in set(old) | set(wanted)}
        resets = self._reset_updates(fresh.values())
        self._apply_or_undo(changes, resets, old)
        record.members, record.ranks, record.worker_ports = members, ranks, ports
        record.tree, record.grants = tree, grants
        record.plans = {sw: p.to_dict() for sw, p in plans.items()}
        record.workers = [asdict(m) for m in members_info]
        record.installed = {sw: [to_text(e) for e in ents] for sw, ents in wanted.items()}
        record.spares = [h for h in record.spares if h != spare]
        record.replaced.append({"dead": dead, "spare": spare, "rank": ranks.index(spare),
                                "same_switch": same_switch, "at": time.time()})
        return record

    def _pick_spare(self, record: JobRecord, dead: str) -> str:
        """The job's first spare on the dead worker's switch, else its first spare."""
        if not record.spares:
            raise JobError(f"job {record.job_id} has no spare hosts (create it with --spare H)")
        here = self.topo.hosts[dead].switch
        return next((h for h in record.spares if self.topo.hosts[h].switch == here), record.spares[0])

    def _swap_tree(self, record: JobRecord, dead: str, spare: str) -> ReductionTree:
        old = record.tree
        member_switch = {(spare if h == dead else h): sw for h, sw in old.member_switch.items()}
        return ReductionTree(old.root, dict(old.parent), member_switch,
                             [spare if h == dead else h for h in old.members])

    def _apply_or_undo(self, changes: dict[str, list[p4runtime_pb2.Update]],
                       resets: dict[str, list[p4runtime_pb2.Update]],
                       old: dict[str, list[p4runtime_pb2.Entity]]) -> None:
        """Write each switch's changes; if any switch refuses, put every switch that took its changes back."""

        def write(c: SwitchClient) -> None:
            if c.name in resets:
                self._write_reset(c, resets[c.name])
            c.write(changes[c.name])

        targets = [sw for sw, ups in changes.items() if ups]
        out = self.fabric.run(write, targets)
        if not out.errors:
            return
        # undo what went in, update by update (a refused update may name an entry that is not ours: never touched)
        back: dict[str, list[p4runtime_pb2.Update]] = {}
        for sw in targets:
            err = out.errors.get(sw)
            failed = {u.index for u in err.updates} if isinstance(err, RpcError) else set()
            before = {entity_key(e): e for e in old.get(sw, [])}
            back[sw] = [_inverse(u, before) for i, u in reversed(list(enumerate(changes[sw]))) if i not in failed]

        def undo(c: SwitchClient) -> None:
            c.write(back[c.name], atomicity="CONTINUE_ON_ERROR")

        self.fabric.run(undo, [sw for sw, ups in back.items() if ups])
        out.raise_first()


def _stable_child_indices(old_plans: dict[str, dict[str, Any]], plans: dict[str, SwitchJobPlan],
                          members: list[MemberInfo], rename: dict[str, str] | None = None
                          ) -> tuple[dict[str, SwitchJobPlan], list[MemberInfo]]:
    """A switch whose children are the same hosts as before (after `rename`: a spare standing for a dead worker)
    keeps their old indices. A fresh plan numbers children by port, so after a replacement it would move the bits
    other workers' in-flight rounds are counted in (the spare's port sorts elsewhere than the dead worker's)."""
    rename = rename or {}
    out = dict(plans)
    moved: dict[str, int] = {}
    for sw, p in plans.items():
        old = old_plans.get(sw)
        if old is None or not all(c.is_host for c in p.children) or not all(c["is_host"] for c in old["children"]):
            continue
        before = {rename.get(c["name"], c["name"]): int(c["index"]) for c in old["children"]}
        if set(before) != {c.name for c in p.children}:
            continue
        out[sw] = replace(p, children=tuple(sorted((replace(c, index=before[c.name]) for c in p.children),
                                                   key=lambda c: c.index)))
        moved.update(before)
    fixed = [replace(m, child_index=moved[m.host]) if m.host in moved else m for m in members]
    return out, fixed


def _inverse(u: p4runtime_pb2.Update, before: dict[str, p4runtime_pb2.Entity]) -> p4runtime_pb2.Update:
    """The update that takes back `u` (applied to a switch that held `before`, keyed by `entity_key`)."""
    if u.type == p4runtime_pb2.Update.INSERT:
        return update("DELETE", u.entity)
    if u.type == p4runtime_pb2.Update.DELETE:
        return update("INSERT", u.entity)
    return update("MODIFY", before[entity_key(u.entity)])


def entity_key(e: p4runtime_pb2.Entity) -> str:
    """Identity of an entity without what MODIFY may change (action, replicas)."""
    k = p4runtime_pb2.Entity()
    k.CopyFrom(e)
    if k.HasField("table_entry"):
        k.table_entry.ClearField("action")
    elif k.HasField("packet_replication_engine_entry"):
        pre = k.packet_replication_engine_entry
        if pre.HasField("multicast_group_entry"):
            pre.multicast_group_entry.ClearField("replicas")
        else:
            pre.clone_session_entry.ClearField("replicas")
    return to_text(k)


def diff_updates(old: list[p4runtime_pb2.Entity], new: list[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Update]:
    """Updates turning `old` into `new`: INSERT/MODIFY in `new`'s order, then DELETE in reverse `old` order."""
    before = {entity_key(e): e for e in old}
    after = {entity_key(e): e for e in new}
    ups = []
    for key, e in after.items():
        if key not in before:
            ups.append(update("INSERT", e))
        elif to_text(before[key]) != to_text(e):
            ups.append(update("MODIFY", e))
    ups += [update("DELETE", e) for key, e in reversed(before.items()) if key not in after]
    return ups


def _read_one(c: SwitchClient, wanted: p4runtime_pb2.Entity,
              tables: dict[int, list[p4runtime_pb2.Entity]]) -> list[p4runtime_pb2.Entity]:
    """The switch's copy of one intended entity (matched by identity); `tables` caches one Read per table."""
    which = wanted.WhichOneof("entity")
    if which == "table_entry":
        tid = wanted.table_entry.table_id
        if tid not in tables:
            probe = p4runtime_pb2.Entity()
            probe.table_entry.table_id = tid
            tables[tid] = c.read([probe])
        key = _table_key(wanted.table_entry)
        return [e for e in tables[tid] if _table_key(e.table_entry) == key]
    if which == "packet_replication_engine_entry":
        pre = wanted.packet_replication_engine_entry
        if pre.WhichOneof("type") == "multicast_group_entry":
            gid = pre.multicast_group_entry.multicast_group_id
            return [e for e in c.read([wanted]) if
                    e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id == gid]
        return c.read([wanted])
    return c.read([wanted])


def _table_key(e: p4runtime_pb2.TableEntry) -> tuple[int, int, bool, tuple[bytes, ...]]:
    matches = tuple(m.SerializeToString(deterministic=True) for m in sorted(e.match, key=lambda m: m.field_id))
    return (e.table_id, e.priority, e.is_default_action, matches)


__all__ = ["Binding", "Grant", "JobManager", "from_text", "to_text"]
