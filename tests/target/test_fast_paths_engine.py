"""The per-packet fast paths of the embedded switch (issue 17, fixed cost per packet) against their slow or scalar
counterparts on random inputs:

- vector code with an invariant operand held in a 0-d array (`vector._Emitter.scalar`) gives what the scalar code
  gives (the scalar code generator follows BMv2's integer semantics statement by statement);
- `vecops.decode` (one cast from the big-endian dtype) and `vecops.encode` (a big-endian array the deparser joins) give the
  wire's big-endian fields, checked with `struct`;
- a shift by a run-time amount, inlined for plain operands, is BMv2's: the low W bits, 0 when the amount is W or more;
- an empty control's entry point does nothing, a non-empty one still runs;
- `FileModeRunner.process` of one frame (no list, no loop) leaves what `process_batch` of that frame leaves;
- `vecops.sat_add_ovf` in the lanes' own dtype (sign test, clamp only where a lane overflowed) equals the int64
  path and the clamped sum; the saturating-add flag idiom is fused only in its exact shape (decided from the IR);
- `vecops.sat_add_ovf_u` (the fused idiom on unsigned patterns) is the signed clamped sum computed with Python ints;
- a field run takes the fused sum's array instead of a copy only when no other name can see that array;
- a store of a reinterpreting cast takes its source (no `view`), register row copies are kept for a rebound or
  viewed local, empty controls are decided from the IR;
- an empty egress control skips egress's metadata in the engine (`Program.egress_noop`) with the same frames,
  counters and registers as the full pass;
- the bench loop that drops output per input batch counts what the keep-everything loop keeps;
- the fused ingress of a port packet (`Program.port_ingress`, `V1Model.ingress_frame`) leaves what the entry
  points called one by one leave, on every program case with input frames.
"""

from __future__ import annotations

import importlib.util
import random
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from p4switch.codegen import vector
from p4switch.compiler import compile_text
from p4switch.runtime import vecops

_SUPPORT = Path(__file__).resolve().parents[1] / "unit" / "codegen" / "vector_support.py"


def _support() -> ModuleType:
    """tests/unit/codegen/vector_support.py (compile a program with and without the vectoriser, run both)."""
    spec = importlib.util.spec_from_file_location("vector_support_for_fast_paths", _SUPPORT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


vs = _support()
L = 20  # lanes per run (at least vector.MIN_LANES)


# ------------------------------------------------------------------------------- invariant operands as 0-d arrays
DECLS = f"""
header ctl_t {{ bit<8> a8; bit<16> a16; bit<32> a32; bit<8> s8; bit<16> s16; }}
header w32_t {{ {vs.fields(32, L)} }}
header w16_t {{ {vs.fields(16, L, signed=True)} }}
header w8_t {{ {vs.fields(8, L)} }}
header flags_t {{ bit<8> f; }}
struct headers_t {{ ctl_t ctl; w32_t w32; w16_t w16; w8_t w8; flags_t fl; }}
"""
PARSER = ("state start { pkt.extract(h.ctl); pkt.extract(h.w32); pkt.extract(h.w16); pkt.extract(h.w8); "
          "pkt.extract(h.fl); transition accept; }")
DEPARSER = "pkt.emit(h.ctl); pkt.emit(h.w32); pkt.emit(h.w16); pkt.emit(h.w8); pkt.emit(h.fl);"
META = "bit<32> k32; int<16> k16; bit<8> k8; bit<1> hit; bit<1> low;"
LOCALS = """
    action mix() {
        m.k32 = h.ctl.a32; m.k16 = (int<16>)h.ctl.s16; m.k8 = h.ctl.a8;
        """ + vs.lanes("h.w32.v{n} = ((h.w32.v{n} & m.k32) | (h.w32.v{n} ^ h.ctl.a32)) + m.k32 * 3;", L) + """
        """ + vs.lanes("h.w16.v{n} = (h.w16.v{n} - m.k16) * (int<16>)(int<8>)h.ctl.s8 + -16s7;", L) + """
        """ + vs.lanes("h.w8.v{n} = (h.w8.v{n} + m.k8) ^ (m.k8 - h.w8.v{n});", L) + """
        """ + vs.lanes("if (h.w32.v{n} > m.k32) { m.hit = 1; }", L) + """
        """ + vs.lanes("if (m.k16 <= h.w16.v{n}) { m.low = 1; }", L) + """
        """ + vs.lanes("if (h.w8.v{n} == h.ctl.a8 || h.w8.v{n} != 200) { h.w8.v{n} = h.w8.v{n} | 1; }", L) + """
    }
"""
INGRESS = "m.hit = 0; m.low = 0; mix(); h.fl.f = (bit<8>)m.hit | ((bit<8>)m.low << 1); sm.egress_spec = 1;"
EDGES32 = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF0000)
EDGES16 = (0, 1, 0x7FFF, 0x8000, 0xFFFF, 7, 0xFFF9)
EDGES8 = (0, 1, 0x7F, 0x80, 0xFF, 200, 199)


def _pick(rng: random.Random, edges: tuple[int, ...], width: int) -> int:
    return rng.choice(edges) if rng.random() < 0.5 else rng.getrandbits(width)


def _frames(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        ctl = struct.pack(">BHIBH", _pick(rng, EDGES8, 8), _pick(rng, EDGES16, 16), _pick(rng, EDGES32, 32),
                          _pick(rng, EDGES8, 8), _pick(rng, EDGES16, 16))
        w32 = struct.pack(f">{L}I", *(_pick(rng, EDGES32, 32) for _ in range(L)))
        w16 = struct.pack(f">{L}H", *(_pick(rng, EDGES16, 16) for _ in range(L)))
        w8 = bytes(_pick(rng, EDGES8, 8) for _ in range(L))
        out.append(ctl + w32 + w16 + w8 + b"\x00" + bytes(rng.getrandbits(8) for _ in range(rng.randrange(4))))
    return out


def test_invariant_operands_as_0d_arrays_match_the_scalar_code() -> None:
    text = vs.program(decls=DECLS, parser=PARSER, ingress=INGRESS, meta=META, ingress_locals=LOCALS,
                      deparser=DEPARSER)
    vec, scalar, log = vs.compile_both(text, "invariant_operands")
    assert sum(1 for _, outcome in log if outcome == "vectorised") >= 6, log
    # the runs use the 0-d operands: set per packet (a meta or header field) and built once (a literal)
    assert "_vx.zeros((), _vx.u32)" in vec.source and "[()] = " in vec.source
    assert "_vx.full((), " in vec.source
    vs.assert_same(vec, scalar, _frames(300, seed=17))


def test_0d_operand_keeps_the_lanes_dtype_and_python_int_results() -> None:
    """The 0-d array of the lanes' dtype gives numpy's Python-int (NEP 50 weak scalar) results, wrap included."""
    rng = np.random.default_rng(3)
    for dtype, hi in ((np.uint8, 1 << 8), (np.uint16, 1 << 16), (np.uint32, 1 << 32)):
        a = rng.integers(0, hi, 257, dtype=np.uint64).astype(dtype)
        for k in (0, 1, hi - 1, int(rng.integers(0, hi))):
            z = np.zeros((), dtype)
            z[()] = k
            for op in (np.add, np.subtract, np.multiply, np.bitwise_and, np.bitwise_xor, np.less, np.not_equal):
                want, got = op(a, k), op(a, z)
                assert got.dtype == want.dtype and (got == want).all(), (dtype, k, op)
                want, got = op(k, a), op(z, a)
                assert got.dtype == want.dtype and (got == want).all(), (dtype, k, op)


# ----------------------------------------------------------------------------------------------- decode / encode
def test_decode_and_encode_are_the_wire_fields() -> None:
    rng = random.Random(5)
    fmt = {8: "B", 16: "H", 32: "I"}
    for _ in range(200):
        width = rng.choice((8, 16, 32))
        count = rng.randrange(1, 300)
        offset = rng.randrange(0, 9)
        data = bytearray(rng.getrandbits(8) for _ in range(offset + count * width // 8 + rng.randrange(3)))
        want = list(struct.unpack_from(f">{count}{fmt[width]}", data, offset))
        got = vecops.decode(bytes(data), offset, count, width)
        assert got.dtype == np.dtype(f"uint{width}") and got.tolist() == want
        got[0] ^= 1  # a copy of its own, writable: the packet's bytes stay as they were
        assert list(struct.unpack_from(f">{count}{fmt[width]}", data, offset)) == want
        values = [rng.getrandbits(width) for _ in range(count)]
        encoded = vecops.encode(np.array(values, dtype=f"uint{width}"), width)
        parts: list[Any] = [b"<", encoded, b">"]  # as the deparser joins it: the array, not a bytes copy
        assert b"".join(parts) == b"<" + struct.pack(f">{count}{fmt[width]}", *values) + b">"


# -------------------------------------------------------------------------------------- shift by a run-time amount
SHIFT = vs.PRELUDE + """
header s_t { bit<8> k; bit<32> a32; bit<16> a16; bit<8> a8; int<16> s16; }
struct headers_t { s_t s; }
struct meta_t { bit<8> amount; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.s); transition accept; } }
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.amount = h.s.k;
        h.s.a32 = h.s.a32 << h.s.k;
        h.s.a16 = (bit<16>)1 << m.amount;
        h.s.a8 = h.s.a8 << (h.s.k + 1);
        h.s.s16 = h.s.s16 << h.s.k;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.s); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _shl(a: int, k: int, width: int) -> int:
    """BMv2: the low W bits of a << k, 0 when k >= W (an independent statement of the rule)."""
    return 0 if k >= width else (a << k) % (1 << width)


def test_shift_by_a_run_time_amount_is_bmv2s() -> None:
    compiled = compile_text(SHIFT, "shift_amounts")
    source = compiled.python_source
    assert "<< _p_h_s.k) & 0xffffffff) if _p_h_s.k < 32 else 0)" in source or \
        "<< p_h.s.k) & 0xffffffff) if p_h.s.k < 32 else 0)" in source, "the plain shift is not inlined"
    assert "_shl(" in source.split("def build", 1)[1], "a computed amount keeps the helper (read once)"
    harness = vs.Harness(compiled)
    rng = random.Random(9)
    for k in [*range(0, 40), 255, 254, *(rng.randrange(256) for _ in range(60))]:
        a32, a16, a8, s16 = rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(8), rng.getrandbits(16)
        frame = struct.pack(">BIHBH", k, a32, a16, a8, s16)
        out, port, _ctx = harness.run(frame)
        assert port == 1
        want = struct.pack(">BIHBH", k, _shl(a32, k, 32), _shl(1, k, 16), _shl(a8, (k + 1) % 256, 8),
                           _shl(s16, k, 16))
        assert out == want, (k, out.hex(), want.hex())


# ------------------------------------------------------------------------------------------------ empty controls
def test_empty_controls_skip_the_call_and_others_still_run() -> None:
    text = vs.PRELUDE + """
header e_t { bit<48> d; bit<48> s; bit<16> t; }
struct headers_t { e_t e; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.e); transition accept; } }
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { sm.egress_spec = 2; } }
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { h.e.t = h.e.t + 1; } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.e); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
    compiled = compile_text(text, "empty_controls")
    source = compiled.python_source
    for role in ("verify_checksum", "compute_checksum"):
        assert f"    def {role}(ctx):\n        pass\n" in source, role
    for role in ("ingress", "egress"):
        assert f"    def {role}(ctx):\n        try:\n" in source, role
    harness = vs.Harness(compiled)
    frame = bytes(range(12)) + b"\x12\x34" + b"payload"
    out, port, _ctx = harness.run(frame)
    assert port == 2 and out == bytes(range(12)) + b"\x12\x35" + b"payload"


# ---------------------------------------------------------------------------------------- file mode, one frame
def test_process_of_one_frame_equals_process_batch() -> None:
    from bench._wide import wide_frames, wide_program
    from p4switch.codegen.audit import compile_generated
    from p4switch.device_loader import LoadedProgram
    from p4switch.switch.filemode import FileModeRunner, TickClock
    from p4switch.switch.pipeline import instantiate

    n = max(vector.MIN_LANES, 16)
    compiled = compile_text(wide_program(n), "wide_one_frame")
    code = compile_generated(compiled.python_source, "<pipeline wide_one_frame>")
    frames = wide_frames(n, 12, seed=4)
    runs = []
    for one_by_one in (True, False):
        clock = TickClock()
        loaded = LoadedProgram("wide_one_frame", compiled.p4info, compiled.runtime_config, code, "")
        pipeline = instantiate(compiled.p4info, loaded, seed=1, clock_us=clock)
        # port 4 (a completed slot's result) is the CPU port: both transmit paths are used
        runner = FileModeRunner(pipeline, {p: f"p{p}" for p in range(5)}, clock=clock, cpu_port=4)
        # frame 44 again before its round completes: a duplicate contribution, dropped
        for i, frame in enumerate([*frames[:46], frames[44], *frames[46:]]):
            port = 1 + i % 3
            if one_by_one:
                runner.process(port, frame, i)
            else:
                runner.process_batch([(port, frame, i)])
        registers = {r.name: list(r.cells) for r in pipeline.state.registers}
        runs.append(({p: list(v) for p, v in runner.outputs().items()}, list(runner.cpu_frames), registers,
                     dict(vars(runner.engine.counters)), clock.now))
    assert runs[0] == runs[1]
    outputs, cpu_frames, _registers, counters, _now = runs[0]
    assert cpu_frames and outputs[4] == cpu_frames and counters["dropped_ingress"] == 1


def test_timed_run_flushed_counts_what_timed_run_keeps() -> None:
    """The bench loop that drops output per input batch (as `FileModeRunner.run()` does after writing it) counts
    exactly the frames the keep-everything loop leaves behind, with a batch boundary inside the run."""
    from bench._filemode import cycled, timed_run, timed_run_flushed
    from bench._wide import wide_frames, wide_program
    from p4switch.codegen.audit import compile_generated
    from p4switch.device_loader import LoadedProgram
    from p4switch.switch.filemode import FileModeRunner, TickClock
    from p4switch.switch.pipeline import instantiate

    n = max(vector.MIN_LANES, 16)
    compiled = compile_text(wide_program(n), "wide_flushed")
    code = compile_generated(compiled.python_source, "<pipeline wide_flushed>")
    frames = wide_frames(n, 10, seed=5)
    frames.insert(13, frames[12])  # a duplicate contribution: dropped, so not every frame comes out
    counts = []
    for flushed in (False, True):
        clock = TickClock()
        loaded = LoadedProgram("wide_flushed", compiled.p4info, compiled.runtime_config, code, "")
        runner = FileModeRunner(instantiate(compiled.p4info, loaded, seed=1, clock_us=clock),
                                {p: f"p{p}" for p in range(5)}, clock=clock)
        if flushed:
            _s, _c, out = timed_run_flushed(runner, cycled(frames, 4), cycled(frames, 83), every=16)
            assert all(len(v) <= 16 for v in runner.outputs().values())
        else:
            timed_run(runner, cycled(frames, 4), cycled(frames, 83))
            out = sum(len(v) for v in runner.outputs().values())
        counts.append(out)
    assert counts[0] == counts[1] and 0 < counts[0] < 83


def _program_dir(name: str) -> Path:
    return Path(__file__).resolve().parent / "programs" / name


def test_an_empty_egress_skips_its_metadata_and_changes_nothing() -> None:
    """`Program.egress_noop` (an empty egress control): the engine skips egress's standard metadata. The same
    frames through the same program with the flag cleared (the full egress pass) give the same frames, counters
    and registers: aggregate_wide (multicast-free unicast, drops), an IPv4 checksum program (compute_checksum
    still runs) and a truncating one; a program with an egress control keeps the full pass."""
    from bench._wide import wide_frames, wide_program
    from p4switch.codegen.audit import compile_generated
    from p4switch.compiler import compile_file
    from p4switch.device_loader import LoadedProgram
    from p4switch.switch.filemode import FileModeRunner, TickClock
    from p4switch.switch.pipeline import instantiate

    n = max(vector.MIN_LANES, 16)
    wide = wide_frames(n, 8, seed=6)
    rng = random.Random(61)
    # Ethernet + IPv4 (version 4, ihl 5) + random bytes, and a few frames of random bytes only
    small = [bytes(rng.getrandbits(8) for _ in range(12)) + b"\x08\x00\x45"
             + bytes(rng.getrandbits(8) for _ in range(rng.randrange(19, 80))) for _ in range(40)]
    small += [bytes(rng.getrandbits(8) for _ in range(rng.randrange(14, 60))) for _ in range(10)]
    cases = [(compile_text(wide_program(n), "wide_noop"), [*wide[:20], wide[18], *wide[20:]])]
    for name in ("checksum_ipv4", "truncate_payload"):
        prog = _program_dir(name) / "prog.p4"
        frames = [f.read_bytes() for f in sorted(_program_dir(name).glob("*.bin"))] or small
        cases.append((compile_file(prog), frames + small))
    for compiled, frames in cases:
        code = compile_generated(compiled.python_source, "<pipeline noop>")
        runs = []
        for noop in (True, False):
            clock = TickClock()
            loaded = LoadedProgram(compiled.name, compiled.p4info, compiled.runtime_config, code, "")
            pipeline = instantiate(compiled.p4info, loaded, seed=1, clock_us=clock)
            assert pipeline.program.egress_noop is True
            pipeline.program.egress_noop = noop
            runner = FileModeRunner(pipeline, {p: f"p{p}" for p in range(5)}, clock=clock)
            for i, frame in enumerate(frames):
                runner.process(1 + i % 3, frame, i)
            registers = {r.name: list(r.cells) for r in pipeline.state.registers}
            runs.append(({p: list(v) for p, v in runner.outputs().items()}, dict(vars(runner.engine.counters)),
                         registers))
        assert runs[0] == runs[1], compiled.name
        assert sum(len(v) for v in runs[0][0].values()) > 0, compiled.name
    clone = compile_file(_program_dir("clone_sessions") / "prog.p4")
    assert "prog.egress_noop = False" in clone.python_source


def _case_input(name: str) -> list[bytes]:
    """The INPUT frames of a tests/target/programs case (its case.py imports casekit from that folder)."""
    import sys

    folder = str(_program_dir(name).parent)
    sys.path.insert(0, folder)
    try:
        namespace: dict[str, Any] = {}
        exec(compile((_program_dir(name) / "case.py").read_text(), f"{name}/case.py", "exec"), namespace)
    finally:
        sys.path.remove(folder)
    return [frame for _port, frame in namespace["INPUT"]]


# egress writes the queueing metadata and timestamps into the packet: the order packets leave the queues in, and
# the depth and time each was given, show in the frames
QUEUE_PROGRAM = vs.PRELUDE + """
header h_t { bit<8> mode; bit<8> pad; }
header o_t { bit<32> enq_ts; bit<19> enq_q; bit<5> p1; bit<32> deq_td; bit<19> deq_q; bit<5> p2; bit<48> egts;
             bit<16> rid; bit<9> port; bit<7> p3; bit<32> itype; }
struct headers_t { h_t h; o_t o; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); pkt.extract(h.o); transition accept; } }
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.h.mode == 1) { sm.mcast_grp = 1; }
        else if (h.h.mode == 2) {
            if (sm.instance_type == 0) { clone(CloneType.I2E, 5); resubmit_preserving_field_list(0); }
            sm.egress_spec = 3;
        } else if (h.h.mode == 3) { clone(CloneType.I2E, 5); sm.egress_spec = 4; }
        else { sm.egress_spec = (bit<9>)(h.h.pad & 3); }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.enq_ts = sm.enq_timestamp; h.o.enq_q = sm.enq_qdepth; h.o.deq_td = sm.deq_timedelta;
        h.o.deq_q = sm.deq_qdepth; h.o.egts = sm.egress_global_timestamp; h.o.rid = sm.egress_rid;
        h.o.port = sm.egress_port; h.o.itype = sm.instance_type;
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.h); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_process_holds_one_packet_and_queues_the_rest_as_process_batch_does() -> None:
    """`process()` sends its ingress's one packet to egress without the queues; clones, multicast replicas and
    resubmissions go through them in the same order as `process_batch` of that frame: same frames per port,
    counters, registers and clock, on programs that clone (I2E and E2E), multicast and resubmit/recirculate."""
    from p4switch.compiler import compile_file
    from p4switch.runtime.state import CloneSession, MulticastGroup, Replica
    from p4switch.switch.filemode import FileModeRunner, TickClock
    from p4switch.switch.pipeline import build_pipeline

    def configure(state: Any) -> None:
        pre = state.pre
        pre.clone_sessions[5] = CloneSession(5, [Replica(0, 2)])
        pre.clone_sessions[6] = CloneSession(6, [Replica(0, 3), Replica(1, 4)])
        pre.mcast_groups[1] = MulticastGroup(1, [Replica(10, 1), Replica(20, 2), Replica(21, 2)])
        pre.mcast_groups[7] = MulticastGroup(7, [Replica(70, 3)])

    rng = random.Random(71)
    # unicast to port 2, then 1, then a multicast to 1, 2, 2: the queues give port 2 out first (the older queue)
    queue_frames = [bytes([0, 2]) + bytes(28), bytes([0, 1]) + bytes(28), bytes([1, 0]) + bytes(28)]
    queue_frames += [bytes([rng.choice((0, 0, 1, 2, 3)), rng.randrange(4)]) + bytes(28) for _ in range(60)]
    cases = [(compile_file(_program_dir(name) / "prog.p4"), _case_input(name) * 3)
             for name in ("clone_sessions", "multicast_rid", "resubmit_recirculate")]
    cases.append((compile_text(QUEUE_PROGRAM, "queue_fields"), queue_frames))
    for compiled, frames in cases:
        name = compiled.name
        runs = []
        for one_by_one in (True, False):
            clock = TickClock()
            pipeline = build_pipeline(compiled.p4info, compiled.device_config_bytes(), seed=1, clock_us=clock)
            configure(pipeline.state)
            runner = FileModeRunner(pipeline, {p: f"p{p}" for p in range(6)}, clock=clock)
            for i, frame in enumerate(frames):
                if one_by_one:
                    runner.process(i % 2, frame, i)
                else:
                    runner.process_batch([(i % 2, frame, i)])
            registers = {r.name: list(r.cells) for r in pipeline.state.registers}
            runs.append(({p: list(v) for p, v in runner.outputs().items()}, dict(vars(runner.engine.counters)),
                         registers, clock.now, len(runner.tm)))
        assert runs[0] == runs[1], name
        outputs, counters = runs[0][0], runs[0][1]
        assert sum(len(v) for v in outputs.values()) > len(frames) // 3, name
        assert counters["cloned"] or counters["replicated"] or counters["resubmitted"], name


# ------------------------------------------------------------------------------- register rows read without a copy
ROWS_DECLS = f"""
header ctl_t {{ bit<8> slot; bit<32> k; }}
header a_t {{ {vs.fields(32, L)} }}
header b_t {{ {vs.fields(32, L, prefix="w")} }}
struct headers_t {{ ctl_t ctl; a_t a; b_t b; }}
"""
ROWS_LOCALS = vs.lanes("register<bit<32>>(4) r{n}; register<bit<32>>(4) q{n};", L) + """
    action rows() {
        bit<32> s = (bit<32>) h.ctl.slot;
        """ + vs.lanes("""{ bit<32> t; r{n}.read(t, s); bit<32> u = (t & h.ctl.k) + h.a.v{n};
            r{n}.write(s, u); h.a.v{n} = u; }""", L) + """
        """ + vs.lanes("""{ bit<32> t; q{n}.read(t, s); q{n}.write(s, (t ^ h.ctl.k) + 1); h.b.w{n} = (t | h.ctl.k); }""", L) + """
    }
"""


def test_a_register_row_is_copied_only_when_a_later_write_could_show() -> None:
    text = vs.program(decls=ROWS_DECLS, parser="state start { pkt.extract(h.ctl); pkt.extract(h.a); "
                      "pkt.extract(h.b); transition accept; }", ingress="rows(); sm.egress_spec = 1;",
                      ingress_locals=ROWS_LOCALS, deparser="pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.b);")
    vec, scalar, log = vs.compile_both(text, "row_copies")
    assert sum(1 for _, outcome in log if outcome == "vectorised") == 2, log
    reads = [line.strip() for line in vec.source.splitlines() if f"else _vx.zeros({L}, _vx.u32)" in line]
    # the first run only combines its row into fresh arrays before writing it: no copy; the second keeps the old
    # row in `t` past the write that replaces it (h.b.w = t | k, an operand but after the write): the copy stays
    assert len(reads) == 2 and ".copy()" not in reads[0] and ".copy()" in reads[1], reads
    rng = random.Random(11)
    frames = [bytes([rng.randrange(6)]) + struct.pack(">I", _pick(rng, EDGES32, 32))
              + struct.pack(f">{2 * L}I", *(_pick(rng, EDGES32, 32) for _ in range(2 * L))) for _ in range(200)]
    vs.assert_same(vec, scalar, frames)


# ----------------------------------------------------------------------- saturating add fused with its flag test
SAT_DECLS = f"""
header ctl_t {{ bit<8> slot; bit<8> pad; }}
header a_t {{ {vs.fields(32, L)} }}
header b_t {{ {vs.fields(16, L, prefix="w")} }}
header c_t {{ {vs.fields(8, L, prefix="x")} }}
header d_t {{ {vs.fields(32, L, prefix="y")} }}
header f_t {{ bit<8> flags; }}
struct headers_t {{ ctl_t ctl; a_t a; b_t b; c_t c; d_t d; f_t f; }}
"""
SAT_META = "bit<1> o32; bit<1> o16; bit<1> o8; bit<1> od;"
SAT_LOCALS = vs.lanes("register<bit<32>>(4) r{n}; register<bit<16>>(4) q{n}; register<bit<8>>(4) p{n};", L) + """
    action sat() {
        bit<32> s = (bit<32>) h.ctl.slot;
        """ + vs.lanes("""{ bit<32> t; r{n}.read(t, s); int<32> v = (int<32>)t |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != t + h.a.v{n}) { m.o32 = 1; } r{n}.write(s, (bit<32>)v); h.a.v{n} = (bit<32>)v; }""",
                       L) + """
        """ + vs.lanes("""{ bit<16> t; q{n}.read(t, s); int<16> v = (int<16>)t |+| (int<16>)h.b.w{n};
            if ((bit<16>)v != t + h.b.w{n}) { m.o16 = 1; } q{n}.write(s, (bit<16>)v); h.b.w{n} = (bit<16>)v; }""",
                       L) + """
        """ + vs.lanes("""{ bit<8> t; p{n}.read(t, s); int<8> v = (int<8>)t |+| (int<8>)h.c.x{n};
            if ((bit<8>)v != t + h.c.x{n}) { m.o8 = 1; } p{n}.write(s, (bit<8>)v); h.c.x{n} = (bit<8>)v; }""",
                       L) + """
        """ + vs.lanes("""{ int<32> v = (int<32>)h.d.y{n} |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != h.d.y{n} - h.a.v{n}) { m.od = 1; } h.d.y{n} = (bit<32>)v; }""", L) + """
    }
"""
SAT_INGRESS = ("m.o32 = 0; m.o16 = 0; m.o8 = 0; m.od = 0; sat(); h.f.flags = (bit<8>)m.o32 | ((bit<8>)m.o16 << 1) "
               "| ((bit<8>)m.o8 << 2) | ((bit<8>)m.od << 3); sm.egress_spec = 1;")


def test_saturating_add_and_its_flag_fused_match_the_scalar_code() -> None:
    text = vs.program(decls=SAT_DECLS, parser="state start { pkt.extract(h.ctl); pkt.extract(h.a); pkt.extract(h.b); "
                      "pkt.extract(h.c); pkt.extract(h.d); pkt.extract(h.f); transition accept; }",
                      ingress=SAT_INGRESS, meta=SAT_META, ingress_locals=SAT_LOCALS,
                      deparser="pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.b); pkt.emit(h.c); pkt.emit(h.d); "
                               "pkt.emit(h.f);")
    vec, scalar, log = vs.compile_both(text, "sat_flags")
    assert sum(1 for _, outcome in log if outcome == "vectorised") == 4, log
    body = vec.source.split("def build", 1)[1]
    # the three idioms fused (8, 16, 32 bits); the fourth compares with a difference, not the sum: left alone
    assert body.count("_vx.sat_add_ovf_u(") == 3 and body.count("_vx.sat_add(") == 1, body
    rng = random.Random(21)
    frames = []
    for _ in range(300):
        a = [_pick(rng, EDGES32, 32) for _ in range(L)]
        frames.append(bytes([rng.randrange(6), 0]) + struct.pack(f">{L}I", *a)
                      + struct.pack(f">{L}H", *(_pick(rng, EDGES16, 16) for _ in range(L)))
                      + bytes(_pick(rng, EDGES8, 8) for _ in range(L))
                      + struct.pack(f">{L}I", *(_pick(rng, EDGES32, 32) for _ in range(L))) + b"\x00")
    vs.assert_same(vec, scalar, frames)
    # each fused flag was both set and clear over these frames (the test sees a wrong mask either way)
    seen = {vec.run(f)[0][-1] for f in frames[:60]}
    assert all({v >> bit & 1 for v in seen} == {0, 1} for bit in range(3)), seen


def test_sat_add_ovf_is_the_clamped_sum_and_the_wrapping_compare() -> None:
    rng = np.random.default_rng(8)
    for width, dt, ut in ((8, np.int8, np.uint8), (16, np.int16, np.uint16), (32, np.int32, np.uint32)):
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        a = rng.integers(lo, hi + 1, 500).astype(dt)
        b = np.concatenate([rng.integers(lo, hi + 1, 496), [hi, lo, hi, lo]]).astype(dt)
        a[-4:] = [hi, lo, 1, -1]
        got, mask = vecops.sat_add_ovf(a, b, width, True, dt)
        want = [min(max(int(x) + int(y), lo), hi) for x, y in zip(a, b, strict=True)]
        wrapped = (a.view(ut) + b.view(ut)).astype(ut)
        assert got.dtype == np.dtype(dt) and got.tolist() == want
        assert mask.tolist() == (got.view(ut) != wrapped).tolist() and mask.any() and not mask.all()


def test_sat_add_ovf_u_on_unsigned_patterns_is_the_signed_clamped_sum() -> None:
    """`sat_add_ovf_u` (the fused idiom on bit<W> patterns, no signed views): each lane the clamped sum of the two
    patterns read as int<W>, computed with Python ints, and the mask set exactly where the sum was clamped;
    the operands are left as they were."""
    rng = np.random.default_rng(10)
    for width, ut, st in ((8, np.uint8, np.int8), (16, np.uint16, np.int16), (32, np.uint32, np.int32)):
        lo, hi, sign = -(1 << (width - 1)), (1 << (width - 1)) - 1, 1 << (width - 1)
        edges = [0, 1, hi, hi + 1, (1 << width) - 1, sign - 2, sign + 1]
        for rounds in range(4):
            size = int(rng.integers(1, 600))
            a = rng.integers(0, 1 << width, size, dtype=np.uint64).astype(ut)
            b = rng.integers(0, 1 << width, size, dtype=np.uint64).astype(ut)
            if rounds:  # lanes at the edges, both ways round
                k = min(size, len(edges))
                a[:k] = rng.choice(edges, k)
                b[:k] = rng.choice(edges, k)
            before = (a.copy(), b.copy())
            got, mask = vecops.sat_add_ovf_u(a, b, width)
            signed = [((int(x) ^ sign) - sign, (int(y) ^ sign) - sign) for x, y in zip(a, b, strict=True)]
            want = [min(max(x + y, lo), hi) for x, y in signed]
            assert got.dtype == np.dtype(st) and got.tolist() == want, (width, rounds)
            assert mask.tolist() == [not lo <= x + y <= hi for x, y in signed], (width, rounds)
            assert (a == before[0]).all() and (b == before[1]).all()
        x = np.array([hi, sign, hi, 5], ut)  # max + max, min + min, max + min, no overflow: both clamps seen
        y = np.array([hi, sign, sign, 7], ut)
        got, mask = vecops.sat_add_ovf_u(x, y, width)
        assert got.tolist() == [hi, lo, -1, 12] and mask.tolist() == [True, True, False, False]


def test_sat_add_ovf_in_the_lanes_dtype_equals_the_int64_path() -> None:
    """Two lane vectors of the type's width take the same-dtype path (wrapping sum, sign test, clamp only where a
    lane overflowed); anything else the int64 path. Both on the same lanes, every lane's sum and flag alike."""
    rng = np.random.default_rng(9)
    for width, dt in ((8, np.int8), (16, np.int16), (32, np.int32)):
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        for k in (0, 1, -1, hi, lo, int(rng.integers(lo, hi + 1))):
            a = np.concatenate([rng.integers(lo, hi + 1, 1000), [hi, lo, 0, -1, hi, lo]]).astype(dt)
            same = vecops.sat_add_ovf(a, np.full(a.size, k, dt), width, True, np.dtype(dt))
            wide = vecops.sat_add_ovf(a, k, width, True, np.dtype(dt))  # a Python int: the int64 path
            assert same[0].dtype == wide[0].dtype == np.dtype(dt)
            assert same[0].tolist() == wide[0].tolist() and same[1].tolist() == wide[1].tolist(), (width, k)
            assert same[0].tolist() == [min(max(int(x) + k, lo), hi) for x in a]


# ------------------------------------------------------------------ headers of sub-byte fields: one struct call
CHUNKS = vs.PRELUDE + """
header ip_t { bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<3> flags; bit<13> frag; bool b;
              bit<7> seven; bit<32> addr; bit<2> x2; bit<30> x30; bit<64> wide; }
header mac_t { bit<48> dst; bit<48> src; bit<4> nib; bit<12> rest; }
struct headers_t { ip_t ip; mac_t mac; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.ip); pkt.extract(h.mac); transition accept; } }
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.ip.ihl = h.ip.ihl + 1; h.ip.frag = h.ip.frag ^ 0x1001; h.ip.b = !h.ip.b; h.ip.x30 = h.ip.x30 + 3;
        h.mac.nib = h.mac.nib + 2; sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.ip); pkt.emit(h.mac); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
IP_WIDTHS = (4, 4, 8, 16, 3, 13, 1, 7, 32, 2, 30, 64)


def _pack_bits(values: list[int], widths: tuple[int, ...]) -> bytes:
    acc = 0
    for v, w in zip(values, widths, strict=True):
        acc = (acc << w) | v
    return acc.to_bytes(sum(widths) // 8, "big")


def test_sub_byte_fields_in_one_struct_call_keep_the_wire_layout() -> None:
    compiled = compile_text(CHUNKS, "struct_chunks")
    source = compiled.python_source
    # ip_t is cut into 8/16/32/64-bit groups (one Struct); mac_t's two 48-bit fields cannot be: the big int stays
    assert "_S_T_ip_t = _struct.Struct('>BBHHBIIQ')" in source, source[:3000]
    assert "_S_T_mac_t" not in source
    harness = vs.Harness(compiled)
    rng = random.Random(2)
    for _ in range(300):
        ip = [rng.getrandbits(w) for w in IP_WIDTHS]
        mac = [rng.getrandbits(48), rng.getrandbits(48), rng.getrandbits(4), rng.getrandbits(12)]
        out, port, ctx = harness.run(_pack_bits(ip, IP_WIDTHS) + _pack_bits(mac, (48, 48, 4, 12)) + b"tail")
        assert port == 1 and ctx.h.ip.version == ip[0] and ctx.h.ip.b == (not ip[6])
        want_ip = list(ip)
        want_ip[1] = (ip[1] + 1) % 16
        want_ip[5] = ip[5] ^ 0x1001
        want_ip[6] = 1 - ip[6]
        want_ip[10] = (ip[10] + 3) % (1 << 30)
        want_mac = [mac[0], mac[1], (mac[2] + 2) % 16, mac[3]]
        assert out == _pack_bits(want_ip, IP_WIDTHS) + _pack_bits(want_mac, (48, 48, 4, 12)) + b"tail"


# ------------------------------------------------------------ stores of a reinterpreting cast take its source
CAST_DECLS = f"""
header ctl_t {{ bit<8> slot; bit<16> k; }}
header a_t {{ {vs.fields(32, L)} }}
header b_t {{ {vs.fields(16, L, prefix="w")} }}
header f_t {{ bit<8> flags; }}
struct headers_t {{ ctl_t ctl; a_t a; b_t b; f_t f; }}
"""
CAST_LOCALS = vs.lanes("register<bit<16>>(4) q{n};", L) + """
    action casts() {
        bit<32> s = (bit<32>) h.ctl.slot;
        """ + vs.lanes("""{ bit<16> t; q{n}.read(t, s); int<16> v = (int<16>)t |-| (int<16>)h.b.w{n};
            q{n}.write(s, (bit<16>)v); h.b.w{n} = (bit<16>)v; }""", L) + """
        """ + vs.lanes("""if (h.a.v{n} > 0x40000000) { h.a.v{n} = (bit<32>)((int<32>)h.a.v{n} |-| 0x50000000); }""",
                       L) + """
    }
"""


def test_stores_of_a_reinterpreting_cast_take_its_source_and_match_the_scalar_code() -> None:
    """`(bit<16>)v` of an int<16> lane vector stored into a bit<16> register row or field run: the store takes `v`
    itself (numpy's assignment converts same-size integers bit for bit, negative lanes included); under a lane
    mask the value goes through `where` as before."""
    text = vs.program(decls=CAST_DECLS, parser="state start { pkt.extract(h.ctl); pkt.extract(h.a); "
                      "pkt.extract(h.b); pkt.extract(h.f); transition accept; }", ingress="casts(); sm.egress_spec = 1;",
                      ingress_locals=CAST_LOCALS,
                      deparser="pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.b); pkt.emit(h.f);")
    vec, scalar, log = vs.compile_both(text, "cast_stores")
    assert sum(1 for _, outcome in log if outcome == "vectorised") == 2, log
    stores = [line.strip() for line in vec.source.splitlines()
              if line.strip().startswith(("VS0_1[", "p_h.b._r", "_p_h_b._r")) and " = " in line]
    assert len(stores) == 2 and not any(".view(" in s.split(" = ", 1)[1] for s in stores), stores
    assert "_vx.where(" in vec.source  # the masked run
    rng = random.Random(31)
    frames = [bytes([rng.randrange(6)]) + struct.pack(">H", _pick(rng, EDGES16, 16))
              + struct.pack(f">{L}I", *(_pick(rng, EDGES32, 32) for _ in range(L)))
              + struct.pack(f">{L}H", *(_pick(rng, EDGES16, 16) for _ in range(L))) + b"\x00" for _ in range(300)]
    vs.assert_same(vec, scalar, frames)
    # negative results reached the stores (the case a bit-for-bit conversion must get right)
    assert any(cell >= 0x8000 for cells in vec.registers().values() for cell in cells)


# ------------------------------------------------------- the saturating-add flag idiom: fused only in its shape
FUSE_DECLS = f"""
header ctl_t {{ bit<8> slot; bit<8> pad; }}
header a_t {{ {vs.fields(32, L)} }}
header d_t {{ {vs.fields(32, L, prefix="y")} }}
header e_t {{ {vs.fields(32, L, prefix="z")} }}
header g_t {{ {vs.fields(32, L, prefix="u")} }}
header f_t {{ bit<8> flags; }}
struct headers_t {{ ctl_t ctl; a_t a; d_t d; e_t e; g_t g; f_t f; }}
"""
FUSE_META = "bit<1> f1; bit<1> f2; bit<1> f3; bit<1> f4;"
FUSE_LOCALS = vs.lanes("register<bit<32>>(4) r{n};", L) + """
    action fuse() {
        bit<32> s = (bit<32>) h.ctl.slot;
        """ + vs.lanes("""{ bit<32> t; r{n}.read(t, s); int<32> v; v = (int<32>)t |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != t + h.a.v{n}) { m.f1 = 1; } r{n}.write(s, (bit<32>)v); }""", L) + """
        """ + vs.lanes("""{ int<32> v = (int<32>)h.d.y{n} |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != h.d.y{n} + h.e.z{n}) { m.f2 = 1; } h.d.y{n} = (bit<32>)v; }""", L) + """
        """ + vs.lanes("""{ int<32> v = (int<32>)h.e.z{n} |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != h.a.v{n} + h.e.z{n}) { m.f3 = 1; } h.e.z{n} = (bit<32>)v; }""", L) + """
        """ + vs.lanes("""if (h.g.u{n} != 0) { int<32> v = (int<32>)h.g.u{n} |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != h.g.u{n} + h.a.v{n}) { m.f4 = 1; } h.g.u{n} = (bit<32>)v; }""", L) + """
    }
"""
FUSE_INGRESS = ("m.f1 = 0; m.f2 = 0; m.f3 = 0; m.f4 = 0; fuse(); h.f.flags = (bit<8>)m.f1 | ((bit<8>)m.f2 << 1) "
                "| ((bit<8>)m.f3 << 2) | ((bit<8>)m.f4 << 3); sm.egress_spec = 1;")


def test_saturation_flag_is_fused_only_in_its_exact_shape() -> None:
    """Decided from the IR when the two statements are emitted: a sum assigned to a declared local and a test of
    the operands in the other order are the idiom; a test against another field's sum, or the idiom under a lane
    mask, stay a saturating add and a compare. Each run against the scalar code, each flag both set and clear."""
    text = vs.program(decls=FUSE_DECLS, parser="state start { pkt.extract(h.ctl); pkt.extract(h.a); "
                      "pkt.extract(h.d); pkt.extract(h.e); pkt.extract(h.g); pkt.extract(h.f); transition accept; }",
                      ingress=FUSE_INGRESS, meta=FUSE_META, ingress_locals=FUSE_LOCALS,
                      deparser="pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.d); pkt.emit(h.e); pkt.emit(h.g); "
                               "pkt.emit(h.f);")
    vec, scalar, log = vs.compile_both(text, "fuse_shapes")
    assert sum(1 for _, outcome in log if outcome == "vectorised") == 4, log
    body = vec.source.split("def build", 1)[1]
    assert body.count("_vx.sat_add_ovf_u(") == 2 and body.count("_vx.sat_add(") == 2, body
    rng = random.Random(41)
    frames = []
    for _ in range(300):
        small = rng.random() < 0.6  # most frames overflow nowhere, the others somewhere
        runs = [struct.pack(f">{L}I", *((rng.getrandbits(24) if small else _pick(rng, EDGES32, 32))
                                         for _ in range(L))) for _ in range(4)]
        frames.append(bytes([rng.randrange(6), 0]) + b"".join(runs) + b"\x00")
    vs.assert_same(vec, scalar, frames)
    seen = {vec.run(f)[0][-1] for f in frames[:80]}
    # f2 compares with another field's sum (set nearly always): the compare is what the scalar code checks
    assert all({v >> bit & 1 for v in seen} == {0, 1} for bit in (0, 2, 3)), seen


# ------------------------------------------------- a field run that takes the fused sum's array instead of a copy
REB_DECLS = f"""
header ctl_t {{ bit<8> slot; bit<8> pad; }}
header a_t {{ {vs.fields(32, L)} }}
header b_t {{ {vs.fields(32, L, prefix="w")} }}
header c_t {{ {vs.fields(32, L, prefix="x")} }}
header d_t {{ {vs.fields(32, L, prefix="y")} }}
header e_t {{ {vs.fields(32, L, prefix="z")} }}
header f_t {{ bit<8> flags; }}
struct headers_t {{ ctl_t ctl; a_t a; b_t b; c_t c; d_t d; e_t e; f_t f; }}
"""
REB_LOCALS = vs.lanes("register<bit<32>>(4) r{n};", L) + """
    action reb() {
        bit<32> s = (bit<32>) h.ctl.slot;
        """ + vs.lanes("""{ bit<32> t; r{n}.read(t, s); int<32> v = (int<32>)t |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != t + h.a.v{n}) { m.f1 = 1; } r{n}.write(s, (bit<32>)v); h.a.v{n} = (bit<32>)v;
            h.a.v{n} = h.a.v{n} + 1; }""", L) + """
        """ + vs.lanes("""{ int<32> v = (int<32>)h.b.w{n} |+| (int<32>)h.c.x{n};
            if ((bit<32>)v != h.b.w{n} + h.c.x{n}) { m.f2 = 1; } h.b.w{n} = (bit<32>)v;
            h.b.w{n} = h.b.w{n} ^ 5; h.c.x{n} = (bit<32>)v; }""", L) + """
        """ + vs.lanes("""{ int<32> v = (int<32>)h.d.y{n} |+| (int<32>)h.a.v{n};
            if ((bit<32>)v != h.d.y{n} + h.a.v{n}) { m.f3 = 1; } bit<32> u = (bit<32>)v; h.d.y{n} = (bit<32>)v;
            h.d.y{n} = h.d.y{n} + 3; h.e.z{n} = u; }""", L) + """
    }
"""


def test_a_run_takes_the_fused_sums_array_only_when_nothing_else_can_see_it() -> None:
    """A whole field run stored from the fused saturating add's result takes that array (no copy) only when every
    earlier use of the result copied it and none follows: the last of two stores (the first run is changed in
    place afterwards), a store after a register write; not a store followed by another use, nor one after the
    result was bound to a second local as a view (that local is read after the run is changed in place). Against
    the scalar code on random packets, overflowing and not: a wrongly shared array shows in the other run."""
    text = vs.program(decls=REB_DECLS, parser="state start { pkt.extract(h.ctl); pkt.extract(h.a); "
                      "pkt.extract(h.b); pkt.extract(h.c); pkt.extract(h.d); pkt.extract(h.e); pkt.extract(h.f); "
                      "transition accept; }",
                      ingress="m.f1 = 0; m.f2 = 0; m.f3 = 0; reb(); h.f.flags = (bit<8>)m.f1 | ((bit<8>)m.f2 << 1) "
                              "| ((bit<8>)m.f3 << 2); sm.egress_spec = 1;",
                      meta="bit<1> f1; bit<1> f2; bit<1> f3;", ingress_locals=REB_LOCALS,
                      deparser="pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.b); pkt.emit(h.c); pkt.emit(h.d); "
                               "pkt.emit(h.e); pkt.emit(h.f);")
    vec, scalar, log = vs.compile_both(text, "rebind_runs")
    assert sum(1 for _, outcome in log if outcome == "vectorised") == 3, log
    body = vec.source.split("def build", 1)[1]
    assert body.count("_vx.sat_add_ovf_u(") == 3, body
    rebound = [line.strip().split(" = ")[0] for line in body.splitlines() if ".view(_vx.u32)" in line
               and "._r" in line.split(" = ")[0] and "[" not in line.split(" = ")[0]]
    # the header each rebound run belongs to (`p_h.c._r0`, or through a hoisted `_p_h_a` binding)
    assert [r.rsplit(".", 1)[0].replace("_p_h_", "p_h.").split(".")[-1] for r in rebound] == ["a", "c"], rebound
    rng = random.Random(43)
    frames = []
    for _ in range(300):
        small = rng.random() < 0.5
        runs = [struct.pack(f">{L}I", *((rng.getrandbits(24) if small else _pick(rng, EDGES32, 32))
                                         for _ in range(L))) for _ in range(5)]
        frames.append(bytes([rng.randrange(5), 0]) + b"".join(runs) + b"\x00")
    vs.assert_same(vec, scalar, frames)


# ------------------------------------------------------ register row copies: decided from the emitter's uses
ESC_DECLS = f"""
header ctl_t {{ bit<8> slot; bit<32> k; }}
header a_t {{ {vs.fields(32, L)} }}
header b_t {{ {vs.fields(32, L, prefix="w")} }}
header c_t {{ {vs.fields(32, L, prefix="x")} }}
struct headers_t {{ ctl_t ctl; a_t a; b_t b; c_t c; }}
"""
ESC_LOCALS = vs.lanes("register<bit<32>>(4) r{n}; register<bit<32>>(4) q{n}; register<bit<32>>(4) p{n};", L) + """
    action rows() {
        bit<32> s = (bit<32>) h.ctl.slot;
        """ + vs.lanes("""{ bit<32> t; r{n}.read(t, s); h.a.v{n} = (t ^ h.ctl.k) + (h.a.v{n} - t); }""", L) + """
        """ + vs.lanes("""{ bit<32> t; q{n}.read(t, s); t = t + h.ctl.k; q{n}.write(s, t); h.b.w{n} = t; }""", L) + """
        """ + vs.lanes("""{ bit<32> t; p{n}.read(t, s); int<32> v = (int<32>)t |+| (int<32>)h.c.x{n};
            p{n}.write(s, (bit<32>)v); h.c.x{n} = (bit<32>)v; }""", L) + """
    }
"""


def test_a_row_local_keeps_its_copy_when_rebound_or_viewed() -> None:
    """The row read's copy goes only when every use the emitter wrote is an operand of a fresh-array operator: a
    local used so (run 1) reads the row in place; one rebound (`t = t + k`, run 2) or reinterpreted by a cast (a
    `view` aliasing the row, run 3) keeps its copy. Against the scalar code on random inputs."""
    text = vs.program(decls=ESC_DECLS, parser="state start { pkt.extract(h.ctl); pkt.extract(h.a); "
                      "pkt.extract(h.b); pkt.extract(h.c); transition accept; }", ingress="rows(); sm.egress_spec = 1;",
                      ingress_locals=ESC_LOCALS, deparser="pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.b); "
                                                          "pkt.emit(h.c);")
    vec, scalar, log = vs.compile_both(text, "row_escapes")
    assert sum(1 for _, outcome in log if outcome == "vectorised") == 3, log
    reads = [line.strip() for line in vec.source.splitlines() if f"else _vx.zeros({L}, _vx.u32)" in line]
    assert [".copy()" in r for r in reads] == [False, True, True], reads
    rng = random.Random(51)
    frames = [bytes([rng.randrange(6)]) + struct.pack(">I", _pick(rng, EDGES32, 32))
              + struct.pack(f">{3 * L}I", *(_pick(rng, EDGES32, 32) for _ in range(3 * L))) for _ in range(200)]
    vs.assert_same(vec, scalar, frames)


def test_an_empty_control_is_one_without_statements_locals_or_parameters() -> None:
    """Decided from the IR: `;` and nested empty blocks are nothing (no call), a control-level local with an
    initialiser is something (its entry point still calls it), and the program behaves the same either way."""
    text = vs.PRELUDE + """
header e_t { bit<48> d; bit<48> s; bit<16> t; }
struct headers_t { e_t e; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.e); transition accept; } }
control VC(inout headers_t h, inout meta_t m) { apply { ; { } { ; } } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { sm.egress_spec = 3; } }
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { bit<8> y = 7; apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { { } } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.e); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
    compiled = compile_text(text, "empty_ir")
    source = compiled.python_source
    for role in ("verify_checksum", "compute_checksum"):
        assert f"    def {role}(ctx):\n        pass\n" in source, role
    for role in ("ingress", "egress"):
        assert f"    def {role}(ctx):\n        try:\n" in source, role
    out, port, _ctx = vs.Harness(compiled).run(bytes(range(14)) + b"pay")
    assert port == 3 and out == bytes(range(14)) + b"pay"


# ------------------------------------------------------------------------------ the fused ingress of a port packet
# ingress writes what a port packet's standard metadata starts with (and the parser's verdict) into the packet; a
# parser error, an `exit` and a non-empty verify control are on the way
PORT_PROGRAM = vs.PRELUDE + """
header h_t { bit<8> mode; bit<8> pad; }
header o_t { bit<16> port; bit<32> len; bit<48> ts; bit<32> itype; bit<16> perr; bit<8> seen; bit<8> vc; }
header x_t { bit<16> ck; bit<16> y; }
struct headers_t { h_t h; o_t o; x_t x; }
struct meta_t { bit<8> unused; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.h); pkt.extract(h.o);
        transition select(h.h.mode) { 7: more; default: accept; }
    }
    state more { pkt.extract(h.x); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) {
    apply { verify_checksum(h.x.isValid(), { h.h.mode, h.h.pad, h.x.y }, h.x.ck, HashAlgorithm.csum16); }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.o.port = (bit<16>)sm.ingress_port; h.o.len = sm.packet_length; h.o.ts = sm.ingress_global_timestamp;
        h.o.itype = sm.instance_type; h.o.perr = (bit<16>)(sm.parser_error == error.PacketTooShort ? 1w1 : 1w0);
        h.o.vc = (bit<8>)sm.checksum_error;
        if (h.h.mode == 1) { sm.egress_spec = 511; exit; }
        if (h.h.mode == 2) { sm.egress_spec = 2; exit; }
        if (h.h.mode == 3) { sm.priority = (bit<3>)h.h.pad; }
        h.o.seen = 1;
        sm.egress_spec = (bit<9>)(h.h.pad & 3);
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.h); pkt.emit(h.o); pkt.emit(h.x); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_the_fused_port_ingress_equals_the_entry_points_one_by_one() -> None:
    """`Program.port_ingress` (init, a port packet's standard metadata, parse, verify, ingress in one call) and
    `V1Model.ingress_frame`'s inline unicast decision leave what the entry points called one by one leave (the
    engine's general pass, used when a pipeline has no fused entry): same frames per port, counters, registers
    and clock, through `process` and `process_batch`, on every tests/target/programs case with input frames, the
    aggregation programs and a program that writes its port metadata, parser error and verify result into the
    packet. The fused entry must have run."""
    from bench._wide import wide_frames, wide_program
    from p4switch.compiler import compile_file
    from p4switch.runtime.state import CloneSession, MulticastGroup, Replica
    from p4switch.switch.filemode import FileModeRunner, TickClock
    from p4switch.switch.pipeline import build_pipeline

    def configure(state: Any) -> None:
        pre = state.pre
        pre.clone_sessions[5] = CloneSession(5, [Replica(0, 2)])
        pre.mcast_groups[1] = MulticastGroup(1, [Replica(10, 1), Replica(20, 2)])

    rng = random.Random(83)
    port_frames = [bytes([rng.choice((0, 0, 1, 2, 3, 7)), rng.randrange(256)])
                   + bytes(rng.getrandbits(8) for _ in range(rng.choice((3, 21, 25, 40)))) for _ in range(80)]
    n = max(vector.MIN_LANES, 16)
    cases = [(compile_text(PORT_PROGRAM, "port_fields"), port_frames),
             (compile_text(wide_program(n), "wide_fused"), wide_frames(n, 10, seed=8)),
             (compile_text(QUEUE_PROGRAM, "queue_fused"), [bytes([rng.randrange(4), rng.randrange(4)]) + bytes(28)
                                                            for _ in range(40)])]
    for case in sorted(p.parent.name for p in (Path(__file__).resolve().parent / "programs").glob("*/case.py")):
        frames = _case_input(case)
        if frames:
            cases.append((compile_file(_program_dir(case) / "prog.p4"), frames))
    assert len(cases) > 40
    for compiled, frames in cases:
        runs = []
        for fused in (True, False):
            for batch in (False, True):
                clock = TickClock()
                pipeline = build_pipeline(compiled.p4info, compiled.device_config_bytes(), seed=1, clock_us=clock)
                configure(pipeline.state)
                calls = [0]
                entry = pipeline.port_ingress
                assert entry is not None, compiled.name

                def counted(*args: Any, entry: Any = entry, calls: list[int] = calls) -> None:
                    calls[0] += 1
                    entry(*args)

                pipeline.port_ingress = counted if fused else None
                # 4 priority queues: a priority of 4..7 is dropped (`V1Model.ingress_frame`'s inline `_enqueue`)
                runner = FileModeRunner(pipeline, {p: f"p{p}" for p in range(6)}, clock=clock, priority_queues=4)
                for i, frame in enumerate(frames):
                    port = 1 + i % 3
                    if batch:
                        runner.process_batch([(port, frame, i)])
                    else:
                        runner.process(port, frame, i)
                assert (calls[0] == len(frames)) if fused else calls[0] == 0, compiled.name
                registers = {r.name: list(r.cells) for r in pipeline.state.registers}
                counters = {c.name: (list(c.packets), list(c.bytes)) for c in pipeline.state.counters}
                runs.append(({p: list(v) for p, v in runner.outputs().items()}, dict(vars(runner.engine.counters)),
                             registers, counters, clock.now))
        assert runs[0] == runs[2] and runs[1] == runs[3], compiled.name
        assert sum(len(v) for v in runs[0][0].values()) or runs[0][1]["dropped_ingress"], compiled.name
        if compiled.name == "port_fields":  # every outcome of the inline decision seen
            counters = runs[0][1]
            assert counters["dropped_priority"] and counters["dropped_ingress"] and counters["transmitted"]
