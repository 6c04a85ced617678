"""The controller end to end: four host agents all-reduce through a controller-built tree of embedded switches
(compiled p4src/p4ina.p4, P4Runtime on loopback, in-process links); then the tree's root switch dies between two
collectives, the controller rebuilds the tree on the other spine, and the next all-reduce is still exact.
Recovery time (detection to the last write) is printed for the report; it is not asserted.

A root that dies in the middle of a collective is covered by tests/target/test_controller_rebuild_inflight.py."""

from __future__ import annotations

import functools
import importlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hostagent.codec as codec_mod
import hostagent.transport as transport_mod
import hostagent.worker as worker_mod
import p4switch.server.server as server_mod
import p4switch.switch.core as core_mod
from controller.app import ControllerApp
from controller.events import Event
from controller.fabric import Fabric as ControllerFabric
from controller.failures import switch_down
from controller.telemetry import collect, job_totals
from controller.topologies import leaf_spine
from controller.topology import Topology

REPO = Path(__file__).resolve().parents[2]
POOL = 16



@functools.lru_cache(maxsize=1)
def _compile() -> Any:
    from p4switch import compiler
    return compiler.compile_file(str(REPO / "p4src" / "p4ina.p4"))  # a compile error fails the tests using it


@dataclass
class Fabric:
    topo: Topology
    switches: dict[str, Any] = field(default_factory=dict)
    servers: dict[str, Any] = field(default_factory=dict)
    dead: set[str] = field(default_factory=set)
    ports: dict[str, Any] = field(default_factory=dict)

    def wire(self) -> None:
        peer: dict[tuple[str, int], tuple[str, int]] = {}
        for lk in self.topo.links:
            peer[lk.a, lk.a_port] = (lk.b, lk.b_port)
            peer[lk.b, lk.b_port] = (lk.a, lk.a_port)
        for name, sw in self.switches.items():
            def out(port: int, frame: bytes, name: str = name) -> None:
                dest = peer.get((name, port))
                if dest is None or name in self.dead or dest[0] in self.dead:
                    return
                self.switches[dest[0]].inject(dest[1], frame)
            sw.add_output_callback(out)

    def kill(self, name: str) -> None:
        """The switch dies: its links go dark, its P4Runtime server goes away."""
        self.dead.add(name)
        self.servers[name].stop(grace=0)
        self.switches[name].stop()

    def close(self) -> None:
        for name in list(self.switches):
            if name not in self.dead:
                self.servers[name].stop(grace=0)
                self.switches[name].stop()


def start_fabric(fab: Fabric, tmp_path: Path, *, wire: bool = True) -> ControllerApp:
    """Run an embedded switch and its P4Runtime server (loopback) for every switch of `fab.topo`, link them in
    process (`wire`; a test that arranges cuts first wires later), give the host-facing switches host ports, and push
    the compiled p4ina.p4 through the controller. The caller closes `fab`, also when this raises."""
    compiled = _compile()
    topo = fab.topo
    for i, name in enumerate(sorted(topo.switches)):
        sw = core_mod.Switch(device_id=0, seed=i)
        sw.start()
        fab.switches[name] = sw
        srv = server_mod.P4RuntimeServer(sw, address="127.0.0.1:0").start()
        fab.servers[name] = srv
        topo.switches[name].grpc = f"127.0.0.1:{srv.port}"
    if wire:
        fab.wire()
    for edge in sorted({h.switch for h in topo.hosts.values()}):
        fab.ports[edge] = transport_mod.SwitchPorts(fab.switches[edge])
    topo.save(tmp_path / "topo.yaml")
    (tmp_path / "p4ina.p4info.txtpb").write_text(compiled.p4info_text())
    (tmp_path / "p4ina.json").write_bytes(bytes(compiled.device_config_bytes()))
    app = ControllerApp(tmp_path / "state.json", timeout=10)
    with app.session(str(tmp_path / "topo.yaml")) as s:
        s.push_pipeline(str(tmp_path / "p4ina.p4info.txtpb"), str(tmp_path / "p4ina.json")).raise_first()
    return app


def kill_switch(fab: Fabric, app: ControllerApp, name: str) -> list[Event]:
    """Switch `name` dies while the controller is connected to every switch (as `ctl watch` is), and the
    controller's failure handling runs on it; returns the controller's events."""
    live = ControllerFabric(fab.topo, timeout=10)
    try:
        for switch in fab.topo.switches:
            live.connected(switch)
        detected = time.time()
        fab.kill(name)
        with app.session(fabric=live) as s:
            return switch_down(s, name, "stopped by the test", detected)
    finally:
        live.close()


@pytest.fixture
def fabric(tmp_path: Path) -> Iterator[tuple[Fabric, ControllerApp]]:
    fab = Fabric(leaf_spine(leaves=2, spines=2, hosts_per_leaf=2))
    try:
        yield fab, start_fabric(fab, tmp_path)
    finally:
        fab.close()


def _workers(fab: Fabric, job: dict[str, Any]) -> list[Any]:
    workers = []
    n = len(job["workers"])
    for w in job["workers"]:
        host = fab.topo.hosts[w["host"]]
        leaf_ip, leaf_mac = fab.topo.switch_address(host.switch)
        ep = codec_mod.Endpoints(src_mac=host.mac, dst_mac=leaf_mac, src_ip=host.ip, dst_ip=leaf_ip,
                                 udp_port=48864)
        transport = fab.ports[host.switch].attach(host.port, 48864)
        workers.append(worker_mod.Worker(job["job"], w["rank"], n_workers=n, child=w["child_index"],
                                         transport=transport, endpoints=ep, pool_size=POOL, timeout=0.2,
                                         max_timeout=1.0, max_retries=200))
    return workers


def _run_all(workers: list[Any], fn: Callable[[Any], Any]) -> list[Any]:
    out: list[Any] = [None] * len(workers)
    errors: list[BaseException] = []

    def go(i: int) -> None:
        try:
            out[i] = fn(workers[i])
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    assert all(o is not None for o in out), "a worker did not finish"
    return out


def test_allreduce_survives_the_loss_of_the_root_switch(fabric: tuple[Fabric, ControllerApp]) -> None:
    fab, app = fabric
    with app.session() as s:
        rec = s.jobs.create(["h1", "h2", "h3", "h4"], slots=POOL)
        job = {"job": rec.job_id, "workers": rec.workers}
        root = rec.tree.root
    workers = _workers(fab, job)
    rng = np.random.default_rng(5)
    data = [rng.integers(-(2**24), 2**24, size=4096, dtype=np.int32) for _ in workers]
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    for out in _run_all(workers, lambda w: w.allreduce(data[w.rank])):
        assert np.array_equal(out, exact)
    with app.session() as s:
        totals = job_totals(collect(s.fabric, s.state.jobs))[str(rec.job_id)]
    chunks = -(-4096 // 64)
    # every chunk: 4 DATA in at the leaves, 2 partial sums in at the root, 2 RESULTs in at the leaves (at least;
    # retransmissions add more)
    assert totals["packets"] >= chunks * 8
    assert totals.get("drops_not_admitted", 0) == 0 and totals.get("drops_unknown_job", 0) == 0

    # the root dies between collectives; the controller (connected to every switch, as `ctl watch` is) moves the
    # tree and the workers carry on
    events = kill_switch(fab, app, root)
    with app.session() as s:
        new_root = s.state.jobs[rec.job_id].tree.root
        assert s.state.jobs[rec.job_id].workers == rec.workers, "ranks and child indices survive the rebuild"
    assert new_root != root
    rebuilt = [e for e in events if e.kind == "job_rebuilt"]
    assert rebuilt and rebuilt[0].data["root"] == new_root
    data2 = [rng.integers(-(2**24), 2**24, size=20000, dtype=np.int32) for _ in workers]
    exact2 = np.sum(data2, axis=0, dtype=np.int64).astype(np.int32)
    for out in _run_all(workers, lambda w: w.allreduce(data2[w.rank])):
        assert np.array_equal(out, exact2)
    print(f"\nrecovery: {rebuilt[0].data['recovery_ms']} ms from detection to the rebuilt tree "
          f"({root} -> {new_root})")


def test_two_concurrent_jobs_on_disjoint_trees_are_both_exact(fabric: tuple[Fabric, ControllerApp]) -> None:
    fab, app = fabric
    with app.session() as s:
        first = s.jobs.create(["h1", "h3"], slots=POOL)
        second = s.jobs.create(["h2", "h4"], slots=POOL, quant="int32")
        assert first.tree.root != second.tree.root and not first.tree.links() & second.tree.links()
        jobs = [{"job": r.job_id, "workers": r.workers} for r in (first, second)]
    workers = _workers(fab, jobs[0]) + _workers(fab, jobs[1])
    rng = np.random.default_rng(9)
    data = {(w.job, w.rank): rng.integers(-(2**20), 2**20, size=3000, dtype=np.int32) for w in workers}
    out = _run_all(workers, lambda w: w.allreduce(data[w.job, w.rank]))
    for w, result in zip(workers, out, strict=True):
        exact = np.sum([data[w.job, r] for r in range(2)], axis=0, dtype=np.int64).astype(np.int32)
        assert np.array_equal(result, exact), f"job {w.job} rank {w.rank}"


def test_compiled_program_matches_the_controller_binding() -> None:
    """Every table, action and counter the controller writes exists in the compiled program with these widths."""
    compiled = _compile()
    from controller.p4info import P4InfoHelper
    from controller.program import P4inaProgram

    helper = P4InfoHelper(compiled.p4info)
    assert P4inaProgram().capacity(helper) == (512, 1024, 16)
    doc = importlib.util.spec_from_file_location("doc_p4info", REPO / "tests" / "unit" / "controller" / "controller_program_p4info.py")
    assert doc is not None and doc.loader is not None
    module = importlib.util.module_from_spec(doc)
    doc.loader.exec_module(module)
    for t in module.documented_p4info().tables:
        real = helper.tables.get(t.preamble.name)
        assert [(m.name, m.bitwidth, m.match_type) for m in real.match_fields] == \
            [(m.name, m.bitwidth, m.match_type) for m in t.match_fields], t.preamble.name
    for a in module.documented_p4info().actions:
        real = helper.actions.get(a.preamble.name)
        assert [(p.name, p.bitwidth) for p in real.params] == [(p.name, p.bitwidth) for p in a.params]
