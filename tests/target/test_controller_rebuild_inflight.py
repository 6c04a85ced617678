"""The root switch dies in the middle of a collective, after its RESULT for one chunk reached leaf1 but not leaf2.

Host agents (hostagent.worker) all-reduce through controller-built trees of embedded switches (compiled
p4src/p4ina.p4, P4Runtime on loopback, in-process links, as in test_controller_allreduce). The controller rebuilds
the tree on the other spine while the workers keep retransmitting. leaf1's workers have moved on to that slot's
next round; leaf2's still retransmit the old one: the new root PULLs the old RESULT from leaf1 and adopts it
(docs/protocol.md, "Tree rebuilds"), so every worker ends with the exact sum.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_controller_allreduce import POOL, Fabric, _run_all, _workers, kill_switch, start_fabric

from controller.app import ControllerApp
from controller.topologies import leaf_spine
from hostagent import protocol as proto


@dataclass
class CuttingFabric(Fabric):
    """In-process links with a cut: once `cut_when(switch, port, frame)` says so, `cut` dies (frames lost)."""

    cut: str = ""
    cut_when: Any = None
    cut_done: threading.Event = field(default_factory=threading.Event)
    pulls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wire(self) -> None:
        peer: dict[tuple[str, int], tuple[str, int]] = {}
        for lk in self.topo.links:
            peer[lk.a, lk.a_port] = (lk.b, lk.b_port)
            peer[lk.b, lk.b_port] = (lk.a, lk.a_port)
        for name, sw in self.switches.items():
            def out(port: int, frame: bytes, name: str = name) -> None:
                dest = peer.get((name, port))
                with self.lock:
                    if is_agg(frame):
                        flags = frame[proto.AGG_OFFSET + proto.OFF_FMT_FLAGS] & 0x3F
                        self.pulls += (flags & (proto.FLAG_PULL | proto.FLAG_RESULT)) == proto.FLAG_PULL
                    if not self.cut_done.is_set() and name == self.cut and is_agg(frame) and self.cut_when(port, frame):
                        self.dead.add(name)  # from here on, nothing leaves or reaches it
                        self.cut_done.set()
                    if dest is None or name in self.dead or dest[0] in self.dead:
                        return
                self.switches[dest[0]].inject(dest[1], frame)
            sw.add_output_callback(out)


def is_agg(frame: bytes) -> bool:
    """An aggregation packet as switches send them: UDP from AGG_PORT, with its values."""
    return (len(frame) >= proto.VALUES_OFFSET and frame[12:14] == b"\x08\x00" and frame[23] == 17
            and int.from_bytes(frame[34:36], "big") == proto.AGG_PORT)


@pytest.fixture
def fabric(tmp_path: Path) -> Iterator[tuple[CuttingFabric, ControllerApp]]:
    fab = CuttingFabric(leaf_spine(leaves=2, spines=2, hosts_per_leaf=2))
    try:
        yield fab, start_fabric(fab, tmp_path, wire=False)  # each test sets its cut, then wires
    finally:
        fab.close()


def _port_towards(fab: Fabric, switch: str, other: str) -> int:
    for lk in fab.topo.links:
        if (lk.a, lk.b) == (switch, other):
            return int(lk.a_port)
        if (lk.b, lk.a) == (switch, other):
            return int(lk.b_port)
    raise AssertionError(f"no link {switch}-{other}")


def test_root_dies_after_its_result_reached_one_leaf_only(fabric: tuple[CuttingFabric, ControllerApp]) -> None:
    fab, app = fabric
    with app.session() as s:
        rec = s.jobs.create(["h1", "h2", "h3", "h4"], slots=POOL)
        job = {"job": rec.job_id, "workers": rec.workers}
        root = rec.tree.root
    to_leaf1, to_leaf2 = _port_towards(fab, root, "leaf1"), _port_towards(fab, root, "leaf2")
    sent_to_leaf1: set[int] = set()

    def cut_when(port: int, frame: bytes) -> bool:
        """The root's RESULT for a chunk of the second round of the pool, already sent to leaf1, going to leaf2."""
        hdr = proto.AGG_HDR_STRUCT.unpack_from(frame, proto.AGG_OFFSET)
        seq, flags = hdr[8], hdr[2] & 0x3F
        if not flags & proto.FLAG_RESULT or not POOL <= seq < 2 * POOL:
            return False
        if port == to_leaf1:
            sent_to_leaf1.add(seq)
            return False
        return port == to_leaf2 and seq in sent_to_leaf1

    fab.cut, fab.cut_when = root, cut_when
    fab.wire()
    workers = _workers(fab, job)
    rng = np.random.default_rng(11)
    data = [rng.integers(-(2**24), 2**24, size=64 * POOL * 4, dtype=np.int32) for _ in workers]
    exact = np.sum(data, axis=0, dtype=np.int64).astype(np.int32)
    outcome: list[list[Any]] = []
    runner = threading.Thread(target=lambda: outcome.append(_run_all(workers, lambda w: w.allreduce(data[w.rank]))))
    runner.start()
    assert fab.cut_done.wait(60), "the root never sent a RESULT to leaf2 after leaf1"
    events = kill_switch(fab, app, root)
    rebuilt = [e for e in events if e.kind == "job_rebuilt"]
    assert rebuilt and rebuilt[0].data["root"] != root
    runner.join(180)
    assert outcome, "the all-reduce did not finish"
    for out in outcome[0]:
        assert np.array_equal(out, exact)
    assert fab.pulls >= 1, "the new root never pulled the RESULT that only leaf1 had"
    print(f"\nroot {root} lost mid-collective: {fab.pulls} PULL(s), "
          f"{sum(w.stats.retransmissions for w in workers)} retransmissions, rebuild {rebuilt[0].data['recovery_ms']} ms")
