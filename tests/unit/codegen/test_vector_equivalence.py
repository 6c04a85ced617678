"""The vectoriser gives exactly what the scalar code gives: the same program compiled both ways, run on the same
random packets (biased to saturation edges and signed values), must emit the same bytes, set the same metadata and
leave the same registers, packet after packet. Each program also checks that its runs were in fact vectorised."""

from __future__ import annotations

import random
import struct

from vector_support import assert_same, compile_both, fields, lanes, program

from p4switch.codegen.vector import MIN_LANES

L = 24  # lanes per run: above MIN_LANES, and not a power of two
EDGES32 = (0, 1, 2, 0x7FFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 0x40000000, 0xC0000000)
EDGES16 = (0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x7F, 0x80, 0xFF, 300, 0xFED4)
EDGES8 = (0, 1, 0x7F, 0x80, 0xFF, 100, 101, 0x9C)

DECLS = f"""
header ctl_t {{ bit<8> slot; bit<8> slot2; bit<8> keep; bit<8> shift; bit<8> mode; bit<8> pad; }}
header vals_t {{ {fields(32, L)} }}
header n8_t {{ {fields(8, L)} }}
header w16_t {{ {fields(16, L)} }}
header s16_t {{ {fields(16, L, signed=True)} }}
header res_t {{ bit<32> acc; bit<32> mag; bit<32> acc16; bit<8> xr; }}
struct headers_t {{ ctl_t ctl; vals_t vals; n8_t n8; w16_t w16; s16_t s16; res_t res; }}
"""
PARSER = ("state start { pkt.extract(h.ctl); pkt.extract(h.vals); pkt.extract(h.n8); pkt.extract(h.w16); "
          "pkt.extract(h.s16); pkt.extract(h.res); transition accept; }")
DEPARSER = "pkt.emit(h.ctl); pkt.emit(h.vals); pkt.emit(h.n8); pkt.emit(h.w16); pkt.emit(h.s16); pkt.emit(h.res);"
META = "bit<1> ovf; bit<1> ovf2; bit<32> keep; bit<8> flag8;"
SLOTS = 8


def _value(rng: random.Random, edges: tuple[int, ...], width: int) -> int:
    return rng.choice(edges) if rng.random() < 0.5 else rng.getrandbits(width)


def frames(count: int, seed: int, *, slots: int = SLOTS) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        ctl = bytes([rng.randrange(slots + 2), rng.randrange(slots + 2), rng.randrange(2),
                     rng.choice((0, 1, 3, 7, 8, 15, 16, 31, 32, 33, 200, rng.randrange(256))), rng.randrange(256), 0])
        vals = struct.pack(f">{L}I", *(_value(rng, EDGES32, 32) for _ in range(L)))
        n8 = bytes(_value(rng, EDGES8, 8) for _ in range(L))
        w16 = struct.pack(f">{L}H", *(_value(rng, EDGES16, 16) for _ in range(L)))
        s16 = struct.pack(f">{L}H", *(_value(rng, EDGES16, 16) for _ in range(L)))
        res = struct.pack(">IIIB", rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(8))
        out.append(ctl + vals + n8 + w16 + s16 + res)
    return out


def build(locals_: str, ingress: str) -> tuple:
    return compile_both(program(decls=DECLS, parser=PARSER, ingress=ingress, meta=META, ingress_locals=locals_,
                                deparser=DEPARSER))


def vectorised(log: list[tuple[int, str]]) -> int:
    return sum(1 for _, outcome in log if outcome == "vectorised")


def test_aggregation_saturating_add_with_mask_and_overflow_flag() -> None:
    """aggregate_wide's lane: read-modify-write of the slot, keep mask, int32 saturating add, a shared flag."""
    locals_ = lanes("register<bit<32>>(8) r{n};", L) + """
    action add() {
        bit<32> s = (bit<32>) h.ctl.slot;
        m.keep = (h.ctl.keep == 0) ? 32w0 : 32w0xffffffff;
        """ + lanes("""{ bit<32> t; r{n}.read(t, s); bit<32> base = t & m.keep;
            int<32> sat = (int<32>)base |+| (int<32>)h.vals.v{n};
            if ((bit<32>)sat != base + h.vals.v{n}) { m.ovf = 1; }
            r{n}.write(s, (bit<32>)sat); h.vals.v{n} = (bit<32>)sat; }""", L) + """
    }
    action load() { bit<32> s2 = (bit<32>) h.ctl.slot2; """ + lanes("r{n}.read(h.vals.v{n}, s2);", L) + """ }"""
    vec, scalar, log = build(locals_, "add(); if ((h.ctl.mode & 1) == 1) { load(); }")
    assert vectorised(log) == 2, log
    assert "_vx.sat_add" in vec.source and "_vx" not in scalar.source
    assert_same(vec, scalar, frames(300, seed=1))


def test_p4ina_accumulate_under_an_invariant_condition() -> None:
    """p4src/include/aggregation.p4's ACCUMULATE: the add happens only when an action-wide condition holds."""
    locals_ = lanes("register<bit<32>>(8) r{n};", L) + """
    action update() {
        bit<32> cell = (bit<32>) h.ctl.slot;
        bit<1> add = (bit<1>) h.ctl.keep;
        bit<32> keep = ((h.ctl.mode & 2) == 0) ? 32w0 : 32w0xffffffff;
        """ + lanes("""{ bit<32> t; r{n}.read(t, cell);
            if (add == 1) {
                bit<32> base = t & keep;
                int<32> sat = (int<32>)base |+| (int<32>)h.vals.v{n};
                if ((bit<32>)sat != base + h.vals.v{n}) { m.ovf = 1; }
                t = (bit<32>)sat;
                r{n}.write(cell, t);
            }
            h.vals.v{n} = t; }""", L) + """
    }"""
    vec, scalar, log = build(locals_, "update();")
    assert vectorised(log) == 1, log
    assert_same(vec, scalar, frames(300, seed=2))


def test_checksums_magnitude_and_reductions() -> None:
    """Sums over the fields (wrapping mod 2^32, of sign-extended narrow values), XOR and the OR of magnitudes."""
    locals_ = """
    action sums() {
        bit<32> acc = 0;
        """ + lanes("acc = acc + h.vals.v{n};", L) + """
        h.res.acc = acc;
        bit<32> acc16 = 0;
        """ + lanes("acc16 = acc16 + (bit<32>)(int<32>)(int<16>)h.w16.v{n};", L) + """
        h.res.acc16 = acc16;
        bit<8> x = 0;
        """ + lanes("x = h.n8.v{n} ^ x;", L) + """
        h.res.xr = x;
        bit<32> mag = 0;
        """ + lanes("{ bit<32> v = h.vals.v{n}; if (v[31:31] == 1) { v = ~v; } mag = mag | v; }", L) + """
        h.res.mag = mag;
    }"""
    vec, scalar, log = build(locals_, "sums();")
    assert vectorised(log) == 4, log
    assert_same(vec, scalar, frames(200, seed=3))


def test_sums_written_as_one_expression() -> None:
    """p4src/include/checksum.p4's block sums: one expression adding every field (sign-extended for the narrow
    formats) plus a constant, never a running sum; and an XOR chain."""
    locals_ = """
    action sums() {
        h.res.acc = """ + lanes("h.vals.v{n} +", L) + """ 32w7;
        h.res.acc16 = """ + lanes("(bit<32>)(int<32>)(int<16>)h.w16.v{n} +", L) + """ 0;
        h.res.mag = """ + lanes("(h.vals.v{n} & 0xff00ff) ^", L) + """ h.res.mag;
        h.res.xr = """ + lanes("h.n8.v{n}", L, sep=" + ") + """;
    }"""
    vec, scalar, log = build(locals_, "sums();")
    assert vectorised(log) == 4, log
    assert_same(vec, scalar, frames(200, seed=9))


def test_reductions_whose_terms_read_fields_more_than_once() -> None:
    """p4src/include/quantization.p4's block magnitude, one OR over `v ^ (v >>s 31)` (the lane's field twice), and
    terms reading two runs (a wrapping dot product, a field of another header per lane): vectorised as well."""
    locals_ = """
    action sums() {
        h.res.mag = """ + lanes("(h.vals.v{n} ^ (bit<32>)((int<32>)h.vals.v{n} >> 31)) |", L) + """ 0;
        h.res.acc = """ + lanes("h.vals.v{n} * (bit<32>)h.n8.v{n} +", L) + """ 0;
        h.res.acc16 = """ + lanes("((bit<32>)h.w16.v{n} |-| (bit<32>)h.s16.v{n}) +", L) + """ 32w1;
    }"""
    vec, scalar, log = build(locals_, "sums();")
    assert vectorised(log) == 3, log
    assert_same(vec, scalar, frames(300, seed=21))


def test_quantization_shifts_saturation_widen_and_narrow() -> None:
    """quantization.p4's ALIGN (a shift that must shift back, clamped otherwise), NARROW (rounding |+| then an
    arithmetic shift by a run-time amount, clamped, into 8-bit fields) and WIDEN (sign extension)."""
    locals_ = """
    action align(bit<8> d) {
        """ + lanes("""{ int<32> x = (int<32>)h.vals.v{n}; int<32> y = x << d;
            if ((y >> d) != x) {
                m.ovf2 = 1;
                if (x < 0) { y = (int<32>)32w0x80000000; } else { y = (int<32>)32w0x7fffffff; }
            }
            h.vals.v{n} = (bit<32>)y; }""", L) + """
    }
    action narrow(bit<8> s) {
        int<32> half = 0;
        if (s != 0) { half = (int<32>)(32w1 << (s - 1)); }
        """ + lanes("""{ int<32> r = ((int<32>)h.vals.v{n} |+| half) >> s;
            if (r > 127) { r = 127; }
            h.n8.v{n} = (bit<8>)(bit<32>)r; }""", L) + """
    }
    action widen() { """ + lanes("h.w16.v{n} = (bit<16>)(int<16>)(int<8>)h.n8.v{n};", L) + """ }"""
    vec, scalar, log = build(locals_, "align(h.ctl.shift); narrow(h.ctl.shift); widen();")
    assert vectorised(log) == 3, log
    assert_same(vec, scalar, frames(300, seed=4))


def test_signed_registers_copies_odd_widths_and_ternaries() -> None:
    """int<16> register stores (patterns kept unsigned, read back sign-extended), field-by-field copies between
    headers, a bit<12> local (not a numpy width), bool locals, |-| and unary minus, ?: per lane."""
    locals_ = lanes("register<int<16>>(8) q{n}; register<int<12>>(8) z{n};", L) + """
    action store_load() {
        bit<32> s = (bit<32>) h.ctl.slot;
        bit<32> s2 = (bit<32>) h.ctl.slot2;
        """ + lanes("q{n}.write(s2, (int<16>)h.w16.v{n});", L) + """
        """ + lanes("{ int<16> x; q{n}.read(x, s); h.s16.v{n} = h.s16.v{n} |+| (x |-| 16s300); }", L) + """
        """ + lanes("""{ int<12> y; z{n}.read(y, s2); z{n}.write(s, (int<12>)h.s16.v{n} - 12s3);
            h.w16.v{n} = (bit<16>)(int<16>)y; }""", L) + """
    }
    action odd() {
        """ + lanes("""{ bit<12> z = (bit<12>)h.w16.v{n}; z = z * 3 - 7;
            bool big = z > 12w2000;
            if (big && h.ctl.keep == 1) { z = z >> 1; } else { z = ~z; }
            h.w16.v{n} = ((bit<16>)z) |+| (h.w16.v{n} |-| 16w100); }""", L) + """
    }
    action tern() {
        """ + lanes("h.n8.v{n} = (h.n8.v{n} > 100) ? h.n8.v{n} - 100 : (bit<8>)(-(int<8>)h.n8.v{n});", L) + """
        """ + lanes("h.s16.v{n} = (h.s16.v{n} < -16s5) ? -h.s16.v{n} : h.s16.v{n} - (int<16>)(int<8>)h.n8.v{n};", L) + """
    }"""
    vec, scalar, log = build(locals_, "store_load(); odd(); tern();")
    assert vectorised(log) == 6, log
    assert_same(vec, scalar, frames(300, seed=5))


def test_control_plane_sees_vector_registers_element_by_element() -> None:
    """Registers in a vector store keep RegisterState's interface: reads and writes of single cells (what the
    P4Runtime server and the controller's slot clearing do) go to the store the packets use."""
    locals_ = lanes("register<bit<32>>(8) r{n};", L) + """
    action add() { bit<32> s = (bit<32>) h.ctl.slot;
        """ + lanes("{ bit<32> t; r{n}.read(t, s); t = t + h.vals.v{n}; r{n}.write(s, t); h.vals.v{n} = t; }", L) + """
    }"""
    vec, scalar, log = build(locals_, "add();")
    assert vectorised(log) == 1, log
    pkt = frames(1, seed=6, slots=1)[0]
    pkt = bytes([3]) + pkt[1:]  # slot 3
    for h in (vec, scalar):
        h.state.registers["I.r5"].cells[3] = 1000
        h.state.registers["I.r7"].cells[:] = [7] * SLOTS
    assert_same(vec, scalar, [pkt, pkt])
    lane5 = struct.unpack_from(">I", pkt, 6 + 4 * 5)[0]
    assert vec.state.registers["I.r5"].cells[3] == (1000 + 2 * lane5) & 0xFFFFFFFF
    assert list(vec.state.registers["I.r7"].cells)[:3] == [7, 7, 7]
    vec.state.reset()
    assert vec.state.registers["I.r5"].cells == [0] * SLOTS


def test_p4runtime_register_entries_on_a_vector_store() -> None:
    """MODIFY and read of register entries (P4Runtime, as the controller clears and inspects slots) on registers
    the vectoriser grouped: the packets see what the control plane wrote, and the control plane what they did."""
    from p4.v1 import p4runtime_pb2

    from p4switch.runtime.entries import MODIFY, EntityCodec

    locals_ = lanes("register<bit<32>>(8) r{n};", L) + """
    action add() { bit<32> s = (bit<32>) h.ctl.slot;
        """ + lanes("{ bit<32> t; r{n}.read(t, s); t = t + h.vals.v{n}; r{n}.write(s, t); h.vals.v{n} = t; }", L) + """
    }"""
    vec, _scalar, log = build(locals_, "add();")
    assert vectorised(log) == 1, log
    codec = EntityCodec(vec.state)
    reg = vec.state.registers["I.r2"]

    def entity(index: int | None, value: int | None = None) -> p4runtime_pb2.Entity:
        e = p4runtime_pb2.Entity()
        e.register_entry.register_id = reg.id
        if index is not None:
            e.register_entry.index.index = index
        if value is not None:
            e.register_entry.data.bitstring = value.to_bytes(4, "big")
        return e

    codec.write(MODIFY, entity(1, 0xFFFFFFF0))
    codec.write(MODIFY, entity(None, 5))  # a wildcard write: every cell (what clearing a register does)
    codec.write(MODIFY, entity(1, 0xFFFFFFF0))
    pkt = bytes([1]) + frames(1, seed=8)[0][1:]
    vec.run(pkt)
    lane2 = struct.unpack_from(">I", pkt, 6 + 4 * 2)[0]
    [one] = codec.read(entity(1))
    assert int.from_bytes(one.register_entry.data.bitstring, "big") == (0xFFFFFFF0 + lane2) & 0xFFFFFFFF
    every = codec.read(entity(None))
    assert [int.from_bytes(e.register_entry.data.bitstring, "big") for e in every] == \
        [5, (0xFFFFFFF0 + lane2) & 0xFFFFFFFF, 5, 5, 5, 5, 5, 5]


def test_min_lanes_is_what_the_tests_assume() -> None:
    assert L >= MIN_LANES
