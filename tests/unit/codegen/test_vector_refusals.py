"""Runs the vectoriser must leave to the scalar code generator: lanes that are not independent or not uniform.
Each case checks the decision (nothing vectorised, and why) and that the program still computes what the scalar
code computes: a refused run is emitted statement by statement, exactly as without the vectoriser."""

from __future__ import annotations

import random
import struct

from vector_support import assert_same, compile_both, fields, lanes, program

L = 20

DECLS = f"""
header ctl_t {{ bit<8> slot; bit<8> pad; }}
header vals_t {{ {fields(32, L + 1)} }}
header other_t {{ {fields(32, L + 1)} }}
header mixed_t {{ {" ".join(f"bit<{32 if n % 2 == 0 else 16}> v{n};" for n in range(L))} }}
header res_t {{ bit<32> acc; }}
struct headers_t {{ ctl_t ctl; vals_t vals; other_t other; mixed_t mixed; res_t res; }}
"""
PARSER = ("state start { pkt.extract(h.ctl); pkt.extract(h.vals); pkt.extract(h.other); pkt.extract(h.mixed); "
          "pkt.extract(h.res); transition accept; }")
DEPARSER = "pkt.emit(h.ctl); pkt.emit(h.vals); pkt.emit(h.other); pkt.emit(h.mixed); pkt.emit(h.res);"
MIXED_BYTES = sum(4 if n % 2 == 0 else 2 for n in range(L))


def frames(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = [rng.choice((0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, rng.getrandbits(32))) for _ in range(2 * L + 2)]
        out.append(bytes([rng.randrange(10), 0]) + struct.pack(f">{2 * L + 2}I", *words)
                   + bytes(rng.getrandbits(8) for _ in range(MIXED_BYTES)) + struct.pack(">I", rng.getrandbits(32)))
    return out


def refused(locals_: str, ingress: str, registers: str = "") -> list[tuple[int, str]]:
    """Compile both ways, check both agree on random packets, return the vectoriser's decisions."""
    text = program(decls=DECLS, parser=PARSER, ingress=ingress, meta="bit<1> ovf;",
                   ingress_locals=registers + locals_, deparser=DEPARSER)
    vec, scalar, log = compile_both(text)
    assert all(outcome != "vectorised" for _, outcome in log), log
    assert "_vx." not in vec.source
    assert_same(vec, scalar, frames(40))
    return log


REGS = lanes("register<bit<32>>(8) r{n};", L)


def test_baseline_the_same_shape_is_vectorised() -> None:
    """The shape the refusals below break, accepted: so each refusal is caused by the one change it makes."""
    text = program(decls=DECLS, parser=PARSER, meta="bit<1> ovf;", deparser=DEPARSER, ingress="a();",
                   ingress_locals=REGS + "action a() { bit<32> s = (bit<32>) h.ctl.slot; "
                   + lanes("{ bit<32> t; r{n}.read(t, s); t = t + h.vals.v{n}; r{n}.write(s, t); h.vals.v{n} = t; }",
                           L) + " }")
    vec, scalar, log = compile_both(text)
    assert log == [(L, "vectorised")]
    assert_same(vec, scalar, frames(40))


def test_a_register_index_that_differs_between_lanes() -> None:
    log = refused("action a() { " + lanes(
        "{ bit<32> t; r{n}.read(t, h.vals.v{n} & 7); h.vals.v{n} = t; }", L) + " }", "a();", REGS)
    assert log == [(L, "a register index that differs between lanes")]


def test_a_constant_index_per_lane_is_not_a_run() -> None:
    log = refused("action a() { " + lanes("r{n}.write({n}, h.vals.v{n});", L) + " }", "a();", REGS)
    assert log == []  # the index literals differ: the statements are not lanes of one run at all


def test_fields_of_different_widths() -> None:
    log = refused("action a() { " + lanes("h.mixed.v{n} = h.mixed.v{n} + 1;", L) + " }", "a();")
    assert [reason for _, reason in log] == ["the lanes' fields differ in type"]


def test_registers_of_different_widths() -> None:
    regs = lanes("register<bit<32>>(8) r{n};", L - 1) + f"register<bit<16>>(8) r{L - 1};"
    log = refused("action a() { bit<32> s = (bit<32>) h.ctl.slot; " + lanes(
        "r{n}.write(s, 5);", L) + " }", "a();", regs)
    assert [reason for _, reason in log] == ["the lanes' register arrays differ in element type or size"]


def test_a_dependency_between_lanes() -> None:
    """Lane n reads the field lane n+1 writes: element order matters, so the lanes cannot run side by side."""
    log = refused("action a() { " + lanes("h.vals.v{n} = h.vals.v{n} + h.vals.v{n1};", L) + " }", "a();")
    assert len(log) == 1 and log[0][1].startswith("lanes depend on each other through")


def test_a_running_sum_that_lanes_read() -> None:
    """A prefix sum: each lane reads the accumulator the lanes before it updated."""
    log = refused("action a() { bit<32> acc = 0; " + lanes(
        "{ acc = acc + h.vals.v{n}; h.other.v{n} = acc; }", L) + " h.res.acc = acc; }", "a();")
    assert len(log) == 1 and "written by one lane and read by the others" in log[0][1]


def test_a_field_shared_by_every_lane_and_written_by_one() -> None:
    log = refused("action a() { " + lanes("h.vals.v{n} = h.vals.v{n} + h.vals.v0;", L) + " }", "a();")
    assert len(log) == 1 and log[0][1].startswith("lanes depend on each other through")


def test_a_field_in_another_header() -> None:
    """One lane reads `h.other` instead of `h.vals`: the statements are no longer lanes of one run."""
    body = lanes("h.vals.v{n} = h.vals.v{n} + 1;", L).replace("h.vals.v9 = h.vals.v9", "h.vals.v9 = h.other.v9")
    log = refused("action a() { " + body + " }", "a();")
    assert log == []  # split into runs of 9 and 10 lanes, both below MIN_LANES


def test_a_non_uniform_statement() -> None:
    body = lanes("h.vals.v{n} = h.vals.v{n} + 1;", L).replace("h.vals.v7 + 1", "h.vals.v7 - 1")
    assert refused("action a() { " + body + " }", "a();") == []


def test_the_same_register_in_every_lane() -> None:
    log = refused("register<bit<32>>(8) total; action a() { bit<32> s = (bit<32>) h.ctl.slot; " + lanes(
        "{ bit<32> t; total.read(t, s); total.write(s, t + h.vals.v{n}); }", L) + " }", "a();")
    assert [reason for _, reason in log] == ["two lanes use the same register array"]


def test_an_extern_call_per_lane() -> None:
    log = refused("counter(8, CounterType.packets) c; action a() { " + lanes(
        "{ if (h.vals.v{n} == 0) { c.count((bit<32>) h.ctl.slot); } }", L) + " }", "a();")
    assert [reason for _, reason in log] == ["a call inside the run"]


def test_a_flag_set_to_different_values_by_two_statements() -> None:
    """The last lane to write would win: order-dependent, so refused."""
    log = refused("action a() { " + lanes(
        "{ if (h.vals.v{n} == 0) { m.ovf = 1; } if (h.vals.v{n} == 1) { m.ovf = 0; } }", L) + " }", "a();")
    assert len(log) == 1 and "more than one statement of the lane" in log[0][1]


def test_a_header_with_a_varbit_field() -> None:
    """The numpy run codecs assume fixed offsets: a header with a varbit field keeps its scalar layout."""
    decls = "header vb_t { " + fields(32, L) + " varbit<64> opt; } struct headers_t { vb_t vb; }"
    text = program(decls=decls, parser="state start { pkt.extract(h.vb, 32); transition accept; }", ingress="a();",
                   ingress_locals="action a() { " + lanes("h.vb.v{n} = h.vb.v{n} + 1;", L) + " }",
                   deparser="pkt.emit(h.vb);")
    vec, scalar, log = compile_both(text)
    assert log == [(L, "a header with a varbit field keeps its scalar layout")]
    rng = random.Random(3)
    assert_same(vec, scalar, [bytes(rng.getrandbits(8) for _ in range(4 * L + 4)) for _ in range(20)])
