"""The controller clears the slot state it grants (on create, and on a rebuild for switches new to the tree), and
nothing else, before the job's entries admit packets; a switch that refuses the reset refuses the job, except a
switch without register writes at all (BMv2), which gets the job and is reported.

Register writes land on loopback P4Runtime doubles; what the cleared state does to packets is tested against the
real program in tests/target/test_job_reuse.py."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_p4rt_double import DoubleServer
from controller_program_p4info import documented_p4info
from doubled_fabric import Env, doubled_leaf_spine, job_manager
from google.protobuf import text_format
from google.rpc import code_pb2

from controller import cli
from controller.client import entity, update
from controller.exceptions import P4InfoError, RpcError
from controller.fabric import Fabric
from controller.jobs import JobManager
from controller.p4info import P4InfoHelper
from controller.program import SLOT_REGISTERS, P4inaProgram
from controller.topology import Topology

HELPER = P4InfoHelper(documented_p4info())
IDS = {HELPER.registers.get(n).preamble.id: n for n in SLOT_REGISTERS}


@pytest.fixture
def fabric() -> Iterator[Env]:
    with doubled_leaf_spine(hosts_per_leaf=2) as env:
        yield env


def _manager(topo: Topology, fab: Fabric) -> JobManager:
    return job_manager(topo, fab)


def _dirty(fab: Fabric, switch: str, cells: range) -> None:
    """Leave non-zero slot state behind, as a deleted job's rounds do."""
    ups = []
    for name in SLOT_REGISTERS:
        for cell in cells:
            reg = HELPER.register_entry(name, cell)
            reg.data.bitstring = b"\x05"
            ups.append(update("MODIFY", entity(reg)))
    fab.connected(switch).write(ups)


def _cells(server: DoubleServer, value: bytes) -> dict[str, set[int]]:
    """Per slot register, the cells holding `value`."""
    out: dict[str, set[int]] = {n: set() for n in SLOT_REGISTERS}
    for (rid, index), data in server.servicer.registers.items():
        if data == value:
            out[IDS[rid]].add(index)
    return out


def test_reset_entities_cover_both_versions_of_each_slot() -> None:
    ents = P4inaProgram().slot_reset_entities(HELPER, 3, 2)
    assert len(ents) == len(SLOT_REGISTERS) * 4
    got = {(IDS[e.register_entry.register_id], e.register_entry.index.index) for e in ents}
    assert got == {(n, c) for n in SLOT_REGISTERS for c in (6, 7, 8, 9)}
    assert {e.register_entry.data.bitstring for e in ents} == {b"\x00"}


def test_reset_entities_refuse_slots_beyond_the_registers() -> None:
    with pytest.raises(P4InfoError, match=r"agg_status index 1025 outside 0\.\.1023"):
        P4inaProgram().slot_reset_entities(HELPER, 510, 3)


def test_create_clears_exactly_the_granted_slots_on_every_switch_of_the_tree(fabric: Env) -> None:
    topo, servers, fab = fabric
    for sw in topo.switches:
        _dirty(fab, sw, range(0, 20))
    rec = _manager(topo, fab).create(["h1", "h2", "h3", "h4"], slots=8)
    for sw, server in servers.items():
        zero, dirty = _cells(server, b"\x00"), _cells(server, b"\x05")
        if sw in rec.grants:
            g = rec.grants[sw]
            granted = set(range(2 * g.slot_base, 2 * (g.slot_base + g.slot_count)))
            assert all(zero[n] == granted for n in SLOT_REGISTERS), sw
            assert all(dirty[n] == set(range(20)) - granted for n in SLOT_REGISTERS), sw
        else:
            assert all(not zero[n] for n in SLOT_REGISTERS), f"{sw} is not in the tree: untouched"


def test_rebuild_clears_slots_only_on_switches_new_to_the_tree(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h3"], slots=8)
    lost = rec.tree.root
    for sw in topo.switches:
        if sw != lost:
            _dirty(fab, sw, range(0, 16))
    fab.client(lost).close()
    servers[lost].stop()
    jobs.state.down_switches.append(lost)
    again = jobs.rebuild(rec.job_id)
    new_root = again.tree.root
    assert new_root != lost
    assert all(cells == set(range(16)) for cells in _cells(servers[new_root], b"\x00").values())
    for leaf in ("leaf1", "leaf2"):  # kept their grants and the state in flight there
        assert all(cells == set(range(16)) for cells in _cells(servers[leaf], b"\x05").values()), leaf


def test_a_switch_refusing_the_reset_refuses_the_job_and_nothing_is_installed(fabric: Env) -> None:
    topo, servers, fab = fabric
    servers["leaf2"].servicer.refuse_registers = code_pb2.RESOURCE_EXHAUSTED
    jobs = _manager(topo, fab)
    with pytest.raises(RpcError, match=r"leaf2.*RESOURCE_EXHAUSTED"):
        jobs.create(["h1", "h3"], slots=8)
    assert all(not s.servicer.tables and not s.servicer.groups for s in servers.values())
    assert not jobs.state.jobs


def test_a_switch_without_register_writes_gets_the_job_and_is_reported(fabric: Env) -> None:
    """BMv2's simple_switch_grpc answers UNIMPLEMENTED to every register write (p4lang/PI#376): refusing jobs there
    would make BMv2 unusable, so the job goes in and the record names the switch whose slots were not cleared."""
    topo, servers, fab = fabric
    servers["leaf2"].servicer.refuse_registers = code_pb2.UNIMPLEMENTED
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h3"], slots=8)
    assert rec.uncleared == ["leaf2"]
    assert servers["leaf2"].servicer.tables and not servers["leaf2"].servicer.registers
    assert all(cells for cells in _cells(servers["leaf1"], b"\x00").values())


def test_a_rebuild_onto_a_switch_without_register_writes_still_moves_the_job(fabric: Env) -> None:
    topo, servers, fab = fabric
    jobs = _manager(topo, fab)
    rec = jobs.create(["h1", "h3"], slots=8)
    lost = rec.tree.root
    other = next(s for s in ("spine1", "spine2") if s != lost)
    servers[other].servicer.refuse_registers = code_pb2.UNIMPLEMENTED
    fab.client(lost).close()
    servers[lost].stop()
    jobs.state.down_switches.append(lost)
    again = jobs.rebuild(rec.job_id)
    assert again.tree.root == other and again.uncleared == [other]
    assert servers[other].servicer.tables


def test_job_create_warns_about_uncleared_switches(fabric: Env, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    topo, servers, _ = fabric
    topo.save(tmp_path / "topo.yaml")
    (tmp_path / "p4info.txt").write_text(text_format.MessageToString(documented_p4info()))
    (tmp_path / "config.json").write_bytes(b"")

    def ctl(*args: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="p4ina")
        cli.register(parser.add_subparsers())
        ns = parser.parse_args(["ctl", *args, "--state", str(tmp_path / "state.json"), "--timeout", "10"])
        rc = ns.handler(ns)
        out, err = capsys.readouterr()
        return rc, out, err

    rc, _, err = ctl("pipeline", "push", "--p4info", str(tmp_path / "p4info.txt"), "--config",
                     str(tmp_path / "config.json"), "--topology", str(tmp_path / "topo.yaml"))
    assert rc == 0, err
    servers["leaf1"].servicer.refuse_registers = code_pb2.UNIMPLEMENTED
    rc, out, err = ctl("job", "create", "h1,h3", "--slots", "8")
    assert rc == 0, err
    assert "warning: slots not cleared on leaf1 (no P4Runtime register writes)" in out
    rc, out, _ = ctl("job", "show", "1", "--json")
    assert rc == 0 and json.loads(out)["uncleared"] == ["leaf1"]
