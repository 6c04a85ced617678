"""BMv2 simple_switch semantics of the engine (docs/targets.md), driven through the deterministic runner with a
hand-written program that follows the code generator's contract."""

from __future__ import annotations

from pathlib import Path

from switch_ctlprog import ctl, observe
from switch_helpers import runner

from p4switch.runtime.context import (
    INSTANCE_EGRESS_CLONE,
    INSTANCE_INGRESS_CLONE,
    INSTANCE_NORMAL,
    INSTANCE_REPLICATION,
)


def run(frames: list[bytes], port: int = 3, **kwargs: object) -> dict[int, list[bytes]]:
    r = runner(**kwargs)
    for i, frame in enumerate(frames):
        r.process(port, frame, i)
    return {p: out for p, out in r.outputs().items() if out}


def test_unicast_sets_standard_metadata() -> None:
    frame = ctl(port=2)
    out = run([frame])
    assert list(out) == [2]
    (pkt,) = out[2]
    assert pkt[:8] == frame[:8] and pkt.endswith(b"payload!")
    assert observe(pkt) == {
        "instance_type": INSTANCE_NORMAL, "egress_rid": 0, "egress_port": 2, "packet_length": len(frame),
        "resubmits": 0, "recircs": 0, "ingress_port": 3, "enq_qdepth": 0, "deq_qdepth": 0,
        "deq_timedelta": 1,  # file mode's clock: one tick between enqueue (ingress) and dequeue (egress)
    }


def test_mark_to_drop_in_ingress_drops() -> None:
    r = runner()
    r.process(0, ctl(port=0xFF), 0)
    assert not any(r.outputs().values())
    assert r.engine.counters.dropped_ingress == 1


def test_too_short_packet_still_runs_ingress_with_parser_error() -> None:
    # the program drops packets whose ctl header is invalid; nothing may crash the engine
    r = runner()
    r.process(0, b"\x01\x02", 0)
    assert r.engine.counters.errors == 0 and r.engine.counters.dropped_ingress == 1


def test_multicast_replicas_carry_rid_and_replication_type_in_pre_order() -> None:
    out = run([ctl(mcast=1)])
    assert sorted(out) == [1, 2]
    assert [(observe(p)["egress_rid"], observe(p)["instance_type"]) for p in out[1]] == [
        (7, INSTANCE_REPLICATION), (9, INSTANCE_REPLICATION),
    ]
    assert [observe(p)["egress_rid"] for p in out[2]] == [8]
    assert all(observe(p)["ingress_port"] == 3 for p in out[1] + out[2])  # replicas keep metadata


def test_unknown_multicast_group_replicates_to_nobody() -> None:
    assert run([ctl(mcast=42)]) == {}


def test_ingress_clone_is_the_unmodified_packet_with_zeroed_metadata_and_goes_first() -> None:
    frame = ctl(port=4, i2e=5)
    out = run([frame])
    clone, original = out[4]
    assert observe(clone)["instance_type"] == INSTANCE_INGRESS_CLONE
    assert observe(original)["instance_type"] == INSTANCE_NORMAL
    # BMv2 zeroes all metadata of a clone (ingress_port included) except the preserved field list
    assert observe(clone)["ingress_port"] == 0 and observe(original)["ingress_port"] == 3
    assert observe(clone)["packet_length"] == len(frame)


def test_clone_to_unconfigured_session_does_nothing() -> None:
    out = run([ctl(port=1, i2e=99)])
    assert list(out) == [1] and len(out[1]) == 1


def test_resubmit_preserves_field_list_and_clones_happen_on_every_pass() -> None:
    out = run([ctl(port=1, i2e=5, resubmit=2, flags=2)])
    (final,) = out[1]
    assert observe(final)["resubmits"] == 2
    assert observe(final)["ingress_port"] == 0  # resubmitted packets start with zeroed standard metadata
    # clone requested in each of the 3 ingress passes, each preserving the value of its own pass
    assert [observe(c)["resubmits"] for c in out[4]] == [1, 2, 2]


def test_clone_without_field_list_has_zeroed_user_metadata() -> None:
    out = run([ctl(port=1, i2e=5, resubmit=1)])  # flags bit1 clear: clone(I2E, 5) without a field list
    assert [observe(c)["resubmits"] for c in out[4]] == [0, 0]
    assert observe(out[1][0])["resubmits"] == 1


def test_recirculate_reenters_ingress_with_deparsed_packet() -> None:
    frame = ctl(port=2, recirc=2)
    out = run([frame])
    (pkt,) = out[2]
    obs = observe(pkt)
    assert obs["recircs"] == 2 and obs["instance_type"] == INSTANCE_NORMAL
    assert obs["packet_length"] == len(frame)  # deparsed length; the observation header is added last


def test_egress_clone_precedes_egress_drop() -> None:
    out = run([ctl(port=1, e2e=5, flags=1)])
    assert 1 not in out
    (clone,) = out[4]
    assert observe(clone)["instance_type"] == INSTANCE_EGRESS_CLONE


def test_egress_clone_and_original_both_leave() -> None:
    out = run([ctl(port=1, e2e=5)])
    assert len(out[1]) == 1 and len(out[4]) == 1
    assert observe(out[4][0])["egress_port"] == 4


def test_clone_session_truncates() -> None:
    out = run([ctl(port=1, i2e=6)])
    (clone,) = out[3]
    assert len(clone) == 10


def test_priority_out_of_range_is_dropped_as_bmv2_does() -> None:
    r = runner(priority_queues=1)
    r.process(0, ctl(port=1, priority=1), 0)
    assert not any(r.outputs().values()) and r.engine.counters.dropped_priority == 1
    r = runner(priority_queues=2)
    r.process(0, ctl(port=1, priority=1), 0)
    assert len(r.outputs()[1]) == 1


def test_output_order_per_port_follows_input_order() -> None:
    frames = [ctl(port=1, payload=bytes([i]) * 4) for i in range(20)]
    out = run(frames)
    assert [p[-4:] for p in out[1]] == [bytes([i]) * 4 for i in range(20)]


def test_batch_ingress_runs_ahead_so_recirculated_packets_leave_after_later_ones() -> None:
    # the order BMv2 shows in the conformance corpus (case recirc): resubmits stay in place, recirculations do not
    r = runner()
    frames = [ctl(port=1, payload=b"A"), ctl(port=1, recirc=1, payload=b"B"), ctl(port=1, resubmit=1, payload=b"C"),
              ctl(port=1, payload=b"D")]
    r.process_batch([(0, f, i) for i, f in enumerate(frames)])
    assert [f[-1:] for f in r.outputs()[1]] == [b"A", b"C", b"D", b"B"]


def test_file_run_across_input_buffer_batches_keeps_order(tmp_path: Path) -> None:
    from p4switch.switch.filemode import INPUT_BUFFER
    from p4switch.switch.ports import PcapWriter, read_pcap

    n = INPUT_BUFFER * 2 + 100
    w = PcapWriter(tmp_path / "p0_in.pcap")
    for i in range(n):
        w.write(ctl(port=1, payload=i.to_bytes(4, "big")), timestamp=float(i))
    w.close()
    r = runner(directory=tmp_path)
    result = r.run()
    assert result.packets_in[0] == n and result.packets_out[1] == n and result.packets_out[0] == 0
    got = [int.from_bytes(f[-4:], "big") for _, f in read_pcap(tmp_path / "p1_out.pcap")]
    assert got == list(range(n))
