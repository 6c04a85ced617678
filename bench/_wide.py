"""The aggregate_wide program (tests/conformance/programs/aggregate_wide.p4) generated for any number of int32
values per packet, its traffic, and the file-mode measurement of one embedded switch on it, with the vectoriser
(p4switch/codegen/vector.py) on or off. Used by `bench/switch_pps.py`; not a benchmark of its own."""

from __future__ import annotations

import itertools
import random
import statistics
import struct
import time
from typing import Any

from bench._filemode import cycled, timed_run_flushed

SLOTS = 16
WORKERS = 4

_TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header ethernet_t {{ bit<48> dst; bit<48> src; bit<16> etype; }}
header ipv4_t {{
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}}
header udp_t {{ bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }}
header agg_t {{ bit<16> slot; bit<8> wid; bit<8> flags; bit<32> tag; }}
header vals_t {{ {fields} }}
struct headers_t {{ ethernet_t eth; ipv4_t ipv4; udp_t udp; agg_t agg; vals_t vals; }}
struct meta_t {{ bit<32> bitmap; bit<32> count; bit<1> ovf; bit<32> keep; }}
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(h.eth); transition select(h.eth.etype) {{ 0x0800: ip; default: accept; }} }}
    state ip {{ pkt.extract(h.ipv4); transition select(h.ipv4.proto) {{ 17: udp; default: accept; }} }}
    state udp {{ pkt.extract(h.udp); transition select(h.udp.dport) {{ 0xBEE0: agg; default: accept; }} }}
    state agg {{ pkt.extract(h.agg); pkt.extract(h.vals); transition accept; }}
}}
control VC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    register<bit<32>>({slots}) bitmap;
    register<bit<32>>({slots}) count;
    {registers}
    action aggregate() {{
        bit<32> s = (bit<32>) h.agg.slot;
        m.ovf = 0;
        {lanes}
    }}
    action claim() {{
        bit<32> s = (bit<32>) h.agg.slot;
        bitmap.read(m.bitmap, s);
        count.read(m.count, s);
        bit<32> me = (bit<32>) 1 << h.agg.wid;
        if ((m.bitmap & me) != 0) {{
            m.count = 0xffffffff;
        }} else {{
            m.keep = (m.bitmap == 0) ? 32w0 : 32w0xffffffff;
            m.bitmap = m.bitmap | me;
            m.count = m.count + 1;
            if (m.count == {workers}) {{ m.bitmap = 0; }}
            bitmap.write(s, m.bitmap);
            count.write(s, m.count == {workers} ? 32w0 : m.count);
        }}
    }}
    apply {{
        if (!h.agg.isValid() || !h.vals.isValid()) {{ mark_to_drop(sm); return; }}
        claim();
        if (m.count == 0xffffffff) {{ mark_to_drop(sm); return; }}
        aggregate();
        h.agg.flags = (bit<8>)m.ovf;
        if (m.count == {workers}) {{
            h.agg.flags = h.agg.flags | 2;
            sm.egress_spec = 4;
        }} else {{
            sm.egress_spec = (bit<9>)h.agg.wid;
        }}
    }}
}}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t h) {{
    apply {{ pkt.emit(h.eth); pkt.emit(h.ipv4); pkt.emit(h.udp); pkt.emit(h.agg); pkt.emit(h.vals); }}
}}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

_LANE = """{{ bit<32> t; r{n}.read(t, s); bit<32> base = t & m.keep;
        int<32> sat = (int<32>)base |+| (int<32>)h.vals.v{n};
        if ((bit<32>)sat != base + h.vals.v{n}) {{ m.ovf = 1; }}
        r{n}.write(s, (bit<32>)sat); h.vals.v{n} = (bit<32>)sat; }}"""


def wide_program(n: int) -> str:
    """aggregate_wide.p4 with `n` int32 values per packet (the conformance program is n = 1024, written with
    macros; this is the same program spelled out)."""
    return _TEMPLATE.format(
        fields=" ".join(f"bit<32> v{i};" for i in range(n)),
        registers=" ".join(f"register<bit<32>>({SLOTS}) r{i};" for i in range(n)),
        lanes="\n        ".join(_LANE.format(n=i) for i in range(n)),
        slots=SLOTS, workers=WORKERS,
    )


def wide_frames(n: int, rounds: int, seed: int = 1) -> list[bytes]:
    """`rounds` rounds of WORKERS contributions each (slot = round mod SLOTS): every packet is aggregated."""
    rng = random.Random(seed)
    frames = []
    for r in range(rounds):
        for wid in range(WORKERS):
            values = struct.pack(f">{n}i", *(rng.randrange(-(1 << 24), 1 << 24) for _ in range(n)))
            payload = struct.pack(">HBBI", r % SLOTS, wid, 0, r) + values
            udp = struct.pack(">HHHH", 40000, 0xBEE0, 8 + len(payload), 0) + payload
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), r & 0xFFFF, 0, 64, 17, 0,
                             bytes([10, 0, 0, 1 + wid]), bytes([10, 0, 0, 100]))
            frames.append(bytes(6) + bytes([2, 0, 0, 0, 0, 1 + wid]) + b"\x08\x00" + ip + udp)
    return frames


def measure(n: int, packets: int, *, vectorise: bool, chunks: int = 5) -> dict[str, Any]:
    """Compile the n-value program (vectorised or scalar), run `packets` frames through one file-mode switch, and
    report the switch's CPU per packet and the int32 elements it aggregated per CPU second (the whole run), and
    CPU per packet of the best, median and worst of `chunks` equal parts of the run."""
    import contextlib

    from p4switch.codegen import vector
    from p4switch.codegen.audit import compile_generated
    from p4switch.compiler import compile_text
    from p4switch.device_loader import LoadedProgram
    from p4switch.switch.filemode import FileModeRunner, TickClock
    from p4switch.switch.pipeline import instantiate

    guard = contextlib.nullcontext() if vectorise else vector.disabled()
    name = f"aggregate_wide_{n}" if vectorise else f"aggregate_wide_{n}_scalar"
    with guard:
        started = time.process_time()
        with vector.recording() as log:
            compiled = compile_text(wide_program(n), name)
        # the module this compile wrote, audited and run as the switch would: no second compile through the device
        # config (and no program cache, which is keyed by program text and name, not by compiler options)
        code = compile_generated(compiled.python_source, f"<pipeline {name}>")
        clock = TickClock()
        loaded = LoadedProgram(name, compiled.p4info, compiled.runtime_config, code, "")
        pipeline = instantiate(compiled.p4info, loaded, seed=1, clock_us=clock)
        compile_cpu = time.process_time() - started
    runner = FileModeRunner(pipeline, {p: f"p{p}" for p in range(5)}, clock=clock)
    frames = wide_frames(n, max(1, min(packets, 400) // WORKERS))
    # the run in `chunks` equal parts, timed one by one: on a shared machine a burst of other work inflates some
    # parts, so the best and the median part say more about the code than the whole run alone
    sizes = [packets // chunks + (1 if i < packets % chunks else 0) for i in range(chunks)]
    seconds = cpu = 0.0
    emitted = 0
    per_chunk: list[float] = []
    stream = iter(cycled(frames, packets))  # one traffic sequence across the parts, as in a single run
    for i, size in enumerate(s for s in sizes if s):
        warm = cycled(frames, min(len(frames), 40)) if i == 0 else iter(())
        part_s, part_cpu, part_out = timed_run_flushed(runner, warm, itertools.islice(stream, size))
        seconds, cpu, emitted = seconds + part_s, cpu + part_cpu, emitted + part_out
        per_chunk.append(part_cpu / size * 1e6)
    ordered = sorted(per_chunk)
    return {
        "values_per_packet": n, "packets": packets, "frame_bytes": len(frames[0]), "frames_out": emitted,
        "vectorised_runs": sum(1 for _, outcome in log if outcome == "vectorised"),
        "cpu_us_per_packet": round(cpu / packets * 1e6, 2),
        "elements_per_cpu_s": round(n * packets / cpu, 1) if cpu > 0 else None,
        "chunk_cpu_us_per_packet": {"best": round(ordered[0], 2), "median": round(statistics.median(ordered), 2),
                                    "worst": round(ordered[-1], 2), "chunks": len(ordered)},
        "wall_pps": round(packets / seconds, 1), "compile_cpu_s": round(compile_cpu, 2),
    }
