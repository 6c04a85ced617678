"""The live switch's per-frame loop (`p4switch.switch.burst.run_frames`) for a program whose egress is empty
(`Program.egress_noop`): the packet the queues would hand out next is deparsed and queued for its port by the loop
itself. It must give what the general path gives (every frame through the input buffer, the queues and
`V1Model.egress`): the same frames per port in the same order, counters and queue statistics, for unicast,
drops (ingress and priority), truncation, I2E clones, multicast and a queue that is not bypassed (paused)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.v1 import p4runtime_pb2
from switch_helpers import PRE
from test_switch_batch_fast_path import FakePort, port

from p4switch.compiler import compile_file
from p4switch.switch import core
from p4switch.switch.core import WORK_BATCH, Switch
from p4switch.switch.entries_file import apply_write_request

# A control header (port, priority, flags) then a payload; egress is empty. flags: bit0 drop, bit1 truncate to
# 6 bytes, bit2 I2E clone to session 5, bit3 multicast group 1.
NOOP_EGRESS_P4 = r"""
#include <core.p4>
#include <v1model.p4>
header c_t { bit<8> port; bit<8> prio; bit<8> flags; bit<8> seq; }
struct headers_t { c_t c; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.c); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = (bit<9>) h.c.port;
        sm.priority = (bit<3>) h.c.prio;
        h.c.seq = h.c.seq + 1;
        if (h.c.flags & 1 != 0) { mark_to_drop(sm); }
        if (h.c.flags & 2 != 0) { truncate(6); }
        if (h.c.flags & 4 != 0) { clone(CloneType.I2E, 32w5); }
        if (h.c.flags & 8 != 0) { sm.mcast_grp = 1; }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.c); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, bytes]:
    src = Path(tmp_path_factory.mktemp("noop")) / "noop_egress.p4"
    src.write_text(NOOP_EGRESS_P4)
    compiled = compile_file(src)
    return compiled.p4info, compiled.device_config_bytes()


def make_switch(program: tuple[object, bytes], monkeypatch: pytest.MonkeyPatch) -> Switch:
    monkeypatch.setattr(core, "AfPacketPort", FakePort)
    sw = Switch(priority_queues=2, queue_depth=1024)
    sw.install_pipeline(*program)
    apply_write_request(sw.state, text_format.Parse(PRE, p4runtime_pb2.WriteRequest()))
    for n in range(1, 5):
        sw.add_interface(n, f"fake{n}")
    sw._running = True  # driven by the test thread (no worker)
    return sw


def frames(seed: int, count: int) -> list[tuple[int, bytes]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        flags = rng.choice((0, 0, 0, 0, 1, 2, 4, 8))
        prio = rng.choice((0, 0, 1, 2))  # 2: out of range for 2 queues, dropped
        head = struct.pack("BBBB", rng.randrange(1, 5), prio, flags, i & 0xFF)
        out.append((rng.randrange(1, 5), head + i.to_bytes(4, "big") + bytes(rng.randrange(0, 40))))
    return out


def pending(sw: Switch) -> bool:
    """Work left that can run now: a paused queue's packets (port 3) only count once it is resumed."""
    paused = sw.tm.depth(3, 0) if sw.tm._queues.get((3, 0)) and sw.tm._queues[(3, 0)].paused_until else 0
    return bool(sw._input_hi or sw._input_lo or len(sw.tm) > paused or any(port(sw, n).rx for n in sw._ports))


def run(sw: Switch, burst: list[tuple[int, bytes]], fast: bool) -> None:
    if fast:
        for n, frame in burst:
            port(sw, n).rx.append(frame)
        while pending(sw):
            sw._work_once()
    else:  # the reference: the input buffer, the queues and `V1Model.egress` for every packet
        sw._hold_enqueue = sw.tm.enqueue_locked
        for n, frame in burst:
            sw.inject(n, frame)
        while pending(sw):
            sw._run_batch(WORK_BATCH)


def test_empty_egress_fast_path_equals_the_queued_path(program: tuple[object, bytes],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    all_frames = frames(3, 500)
    rng = random.Random(9)
    bursts: list[list[tuple[int, bytes]]] = []
    while all_frames:
        size, n = rng.choice((1, 3, 32, 64, 100)), rng.randrange(1, 5)
        bursts.append([(n, f) for _, f in all_frames[:size]])
        all_frames = all_frames[size:]
    results = []
    for fast in (True, False):
        sw = make_switch(program, monkeypatch)
        try:
            assert sw.pipeline is not None and sw.pipeline.program.egress_noop
            for i, burst in enumerate(bursts):
                if i == len(bursts) // 2:
                    sw.pause_queue(3, 0, 30.0)  # from here on port 3's packets wait in their queue
                run(sw, burst, fast)
            sw.pause_queue(3, 0, 0.0)
            run(sw, [], fast)
            out = {n: list(port(sw, n).out) for n in sorted(sw._ports)}
            queues = [(q.port, q.priority, q.enqueued, q.dropped) for q in sw.tm.stats()]
            results.append((out, dict(vars(sw.engine.counters)), queues))
        finally:
            sw.stop()
    fast_run, queued_run = results
    assert fast_run == queued_run
    counters = fast_run[1]
    assert counters["dropped_ingress"] and counters["dropped_priority"] and counters["cloned"]
    assert counters["replicated"] and counters["transmitted"] > 300
    assert any(len(f) == 6 for f in fast_run[0][1])  # truncated frames went out
