"""p4src/p4ina.p4 itself in one file-mode switch, as the fabric runs it: built for N values per packet
(`-D AGG_VALUES=N`), a job installed with the controller's own entities (`controller.program.switch_job_entities`,
the switch the root of 4 workers), and the 4 workers' DATA packets in turn, so every 4th packet completes a slot and
leaves as a RESULT multicast to the 4 workers (4 egress copies). Used by `bench/switch_pps.py`; not a benchmark of
its own."""

from __future__ import annotations

import struct
import time
from pathlib import Path
from typing import Any

from bench._filemode import timed_run

REPO = Path(__file__).resolve().parent.parent
PROGRAM = REPO / "p4src" / "p4ina.p4"
WORKERS = 4
POOL = 16  # slots of the job: a slot is reused, with the other version, 16 chunks later
JOB_ID = 7
SWITCH_MAC, SWITCH_IP = "02:00:00:00:ff:00", "10.255.0.0"


def compile_pipeline(n: int) -> tuple[Any, dict[str, Any]]:
    """p4ina.p4 built for `n` values per packet, compiled once and instantiated as a file-mode pipeline (no second
    compile through the device config: the module the compiler just wrote is audited and run)."""
    import sys

    from p4switch import compiler
    from p4switch.codegen.audit import compile_generated
    from p4switch.device_loader import LoadedProgram
    from p4switch.switch.filemode import TickClock
    from p4switch.switch.pipeline import instantiate

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # the wide header's constructor nests deeply in `compile`
    try:
        started = time.process_time()
        result = compiler.compile_file(str(PROGRAM), defines={"AGG_VALUES": str(n)})
        code = compile_generated(result.python_source, f"<pipeline p4ina {n}>")
        compile_cpu = time.process_time() - started
    finally:
        sys.setrecursionlimit(limit)
    loaded = LoadedProgram(result.name, result.p4info, result.runtime_config, code, "")
    clock = TickClock()
    pipeline = instantiate(result.p4info, loaded, seed=1, clock_us=clock)
    return pipeline, {"clock": clock, "compile_cpu_s": round(compile_cpu, 2)}


def install_job(pipeline: Any) -> None:
    """The root's entities for a job of WORKERS hosts on ports 1..WORKERS (child index = port - 1), written through
    the P4Runtime entity codec the server uses."""
    from controller.p4info import P4InfoHelper
    from controller.plan import Child, SwitchJobPlan
    from controller.program import switch_job_entities
    from p4switch.runtime.entries import INSERT, EntityCodec

    children = tuple(Child(port=w + 1, index=w, name=f"h{w}", is_host=True, ip=f"10.0.0.{w + 1}",
                           mac=f"02:00:00:00:00:{w + 1:02x}", udp_port=40000 + w) for w in range(WORKERS))
    plan = SwitchJobPlan(job_id=JOB_ID, switch="s1", role="root", is_root=True, slot_base=0, slot_count=POOL,
                         group=1, quant="int32", children=children)
    codec = EntityCodec(pipeline.state)
    for entity in switch_job_entities(P4InfoHelper(pipeline.p4info), plan, my_mac=SWITCH_MAC, my_ip=SWITCH_IP):
        codec.write(INSERT, entity)


def worker_frames(n: int, chunks: int, seed: int = 1) -> list[tuple[int, bytes]]:
    """(ingress port, DATA frame) for `chunks` chunks, the 4 workers' contributions to chunk k one after the other
    (slot k mod POOL, version (k div POOL) mod 2, seq k): the first frame of each worker is built with Scapy, the
    rest patch its aggregation header and values, as a host agent does."""
    import numpy as np
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    from hostagent import protocol as proto

    rng = np.random.default_rng(seed)
    vectors = [rng.integers(-(1 << 24), 1 << 24, n).astype(np.int32) for _ in range(8)]
    out: list[tuple[int, bytes]] = []
    templates: list[bytes] = []
    for w in range(WORKERS):
        layers = proto.agg_layers(vectors[w], job_id=JOB_ID, slot=0, ver=0, seq=0, child=w, lanes=n, step=1)
        pkt = (Ether(src=f"02:00:00:00:00:{w + 1:02x}", dst=SWITCH_MAC)
               / IP(src=f"10.0.0.{w + 1}", dst=SWITCH_IP, tos=proto.TOS_GRADIENT)
               / UDP(sport=40000 + w, dport=proto.AGG_PORT, chksum=0) / layers)
        templates.append(bytes(pkt))
    for k in range(chunks):
        for w in range(WORKERS):
            values = vectors[(k + w) % len(vectors)]
            data = bytearray(templates[w])
            proto.AGG_HDR_STRUCT.pack_into(
                data, proto.AGG_OFFSET, JOB_ID, k % POOL, proto.pack_fmt_flags(proto.FMT_INT32, 0),
                proto.pack_ver_child((k // POOL) % 2, w), 0, 0, 1, 0, k, 1, proto.checksum(values))
            data[proto.VALUES_OFFSET:] = values.astype(">i4").tobytes()
            out.append((w + 1, bytes(data)))
    return out


def measure(n: int, packets: int) -> dict[str, Any]:
    """CPU of one file-mode switch per ingress DATA packet (its share of the RESULT's 4 egress copies included)
    and int32 elements aggregated per CPU second, after a warm-up of 4 chunks. Output frames are counted and
    dropped as the run goes (`timed_run_flushed`, as `FileModeRunner.run()` writes and drops each batch's): kept,
    the RESULTs' 8 KB frames at 2048 values cost first-touch page faults (kernel CPU) no file-mode run pays. One
    more chunk after the timed part checks the sum: each worker's RESULT is the exact sum of its 4 contributions."""
    from bench._filemode import timed_run_flushed
    from p4switch.switch.filemode import FileModeRunner

    chunks = max(1, packets // WORKERS)
    pipeline, info = compile_pipeline(n)
    install_job(pipeline)
    runner = FileModeRunner(pipeline, {p: f"p{p}" for p in range(WORKERS + 1)}, clock=info["clock"])
    warm = worker_frames(n, 4, seed=2)
    frames = worker_frames(n, chunks + 5)[4 * WORKERS:]  # seq continues after the warm-up's chunks
    frames, check = frames[:-WORKERS], frames[-WORKERS:]
    timed_run(runner, warm, ())
    counters_before = dict(vars(runner.engine.counters))  # after the warm-up: the timed part's errors only
    seconds, cpu, emitted = timed_run_flushed(runner, (), frames)
    outputs = runner.outputs()
    for out in outputs.values():
        out.clear()
    for i, (port, frame) in enumerate(check):
        runner.process(port, frame, i)
    sent = len(frames)
    counters = {k: v - counters_before.get(k, 0) for k, v in vars(runner.engine.counters).items()}
    expected = chunks * WORKERS  # one RESULT per chunk to each worker
    check_sum = [sum(v) for v in zip(*(result_values(f) for _, f in check), strict=True)]
    exact = all(len(outputs[p]) == 1 and result_values(outputs[p][0]) == check_sum for p in range(1, WORKERS + 1))
    return {
        "values_per_packet": n, "packets": sent, "frame_bytes": len(frames[0][1]),
        "results_out": emitted, "results_expected": expected, "all_results": emitted == expected,
        "result_exact": exact,
        "errors": counters.get("errors", 0),
        "cpu_us_per_packet": round(cpu / sent * 1e6, 2),
        "elements_per_cpu_s": round(n * sent / cpu, 1) if cpu > 0 else None,
        "wall_pps": round(sent / seconds, 1), "compile_cpu_s": info["compile_cpu_s"],
    }


def result_values(frame: bytes) -> list[int]:
    """The int32 values of a RESULT frame (for checks by callers)."""
    from hostagent import protocol as proto

    count = (len(frame) - proto.VALUES_OFFSET) // 4
    return list(struct.unpack_from(f">{count}i", frame, proto.VALUES_OFFSET))
