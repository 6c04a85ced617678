"""bench/p4c_samples and its .stf harness (bench/_p4c_stf): the rules of p4c's backends/bmv2/bmv2stf.py (expected
packets as prefixes unless `$`, `*` nibbles, per-port counts, `expect PORT` alone, HexToByte's odd digit, ternary masks
and lpm prefixes from the digits written, name suffixes, STF priorities where the larger wins) and the P4Info
comparison and data checks; bench/p4c_errors' reading of p4c's stderr (first error, `Actual error` part, caret
mapped through collapsed blanks, stale outputs). Expected values come from bmv2stf's documented behaviour, p4c's
stderr format and P4 semantics."""

from __future__ import annotations

import pytest

from bench import p4c_samples
from bench._p4c_stf import (
    Expectation,
    StfError,
    _key_name,
    compare_outputs,
    lpm,
    packet_bytes,
    parse_stf,
    run_stf,
    split_action,
    ternary,
)

CURRENT = """pkg_info {
  arch: "v1model"
}
tables {
  preamble {
    id: 1
    name: "ingress.t"
  }
  initial_default_action {
    action_id: 2
  }
  size: 1024
}
actions {
  preamble {
    id: 2
    name: "ingress.a"
  }
}
"""


def test_expectation_is_a_prefix_unless_dollar() -> None:
    e = Expectation("0a**0c")
    assert e.mismatch(bytes.fromhex("0a990c")) is None
    assert e.mismatch(bytes.fromhex("0a990cff")) is None  # bmv2stf compares only the expected digits
    assert "too short" in (e.mismatch(bytes.fromhex("0a99")) or "")
    assert "position 5" in (e.mismatch(bytes.fromhex("0a990d")) or "")  # nibbles counted from 0
    assert "too long" in (Expectation("0a**0c", exact_length=True).mismatch(bytes.fromhex("0a990cff")) or "")


def test_parse_and_compare_per_port() -> None:
    test = parse_stf("# c\npacket 0 0a 0B\nexpect 0 0a0b $\nexpect 1\nexpect 2 ff\nwait\n")
    assert test.ports == [0, 1, 2]
    expects, anything = test.expectations()
    assert expects[0] == [Expectation("0a0b", exact_length=True)] and anything == {1}
    assert compare_outputs(test, {0: [b"\x0a\x0b"], 1: [b"\x01", b"\x02"], 2: [b"\xff\x00"]}) is None
    # a port the .stf never names is not opened: what the switch sends there is not checked
    assert compare_outputs(test, {0: [b"\x0a\x0b"], 2: [b"\xff"], 7: [b"\x00"]}) is None
    assert compare_outputs(test, {0: [b"\x0a\x0b", b"\x0a\x0b"], 2: [b"\xff"]}) == \
        "Expected 1 packets on port 0 got 2"
    assert compare_outputs(test, {0: [b"\x0a\x0b"]}) == "Expected 1 packets on port 2 got 0"
    with pytest.raises(StfError, match="unknown stf command"):
        parse_stf("table_add t a 1\n")
    with pytest.raises(StfError, match="bad packet data"):
        parse_stf("packet 0 0g\n")


def test_odd_digit_packets_and_values() -> None:
    assert packet_bytes("12340") == b"\x12\x34\x00"  # HexToByte: a lone last digit is a byte
    assert ternary("0x0A**") == (0x0A00, 0xFF00)
    assert ternary("0b1*") == (0b10, 0b10)
    assert ternary("0x05&&&0x0f") == (5, 15)
    with pytest.raises(StfError, match="Decimal value"):
        ternary("7")
    assert lpm("0x0A01****") == (0x0A010000, 16)
    assert lpm("0x0a000000/8") == (0x0A000000, 8)


def test_names_and_actions() -> None:
    names = ["hdr.ipv4.dstAddr", "hdr.ipv4.isValid()", "h.s[1].f"]
    assert _key_name(names, "ipv4.dstAddr") == "hdr.ipv4.dstAddr"
    assert _key_name(names, "hdr.ipv4.valid") == "hdr.ipv4.isValid()"
    assert _key_name(names, "hdr.ipv4.$valid$") == "hdr.ipv4.isValid()"
    assert _key_name(names, "h.s$1.f") == "h.s[1].f"
    with pytest.raises(StfError, match="Unexpected key field"):
        _key_name(names, "srcAddr")
    assert split_action("k:1 a(x:1, y:0x2) = H") == ("a", [("x", "1"), ("y", "0x2")], "k:1 ")


def test_p4info_diff_and_data_checks() -> None:
    assert p4c_samples.p4info_diff(CURRENT, CURRENT) is None
    changed = CURRENT.replace('name: "ingress.a"', 'name: "ingress.b"')
    assert p4c_samples.p4info_diff(changed, CURRENT) == "line 17: got 'name: \"ingress.b\"', p4c has 'name: \"ingress.a\"'"
    assert p4c_samples.p4info_diff(CURRENT + "x\n", CURRENT) == "line 20: only ours has 'x'"
    assert p4c_samples.p4info_format_problem(CURRENT) is None
    old = CURRENT.replace("initial_default_action {\n    action_id: 2\n  }", "initial_default_action_id: 2")
    assert "older" in (p4c_samples.p4info_format_problem(old) or "")
    no_initial = CURRENT.replace("  initial_default_action {\n    action_id: 2\n  }\n", "")
    assert "without initial_default_action" in (p4c_samples.p4info_format_problem(no_initial) or "")
    corelib = CURRENT.replace('    name: "ingress.a"\n', '    name: "ingress.a"\n    annotations: "@corelib"\n')
    assert "@corelib" in (p4c_samples.p4info_format_problem(corelib) or "")
    program = "control ingress() { action a() {} table t { actions = { a; } } apply {} }"
    assert p4c_samples.p4info_program_mismatch(CURRENT, program) is None
    # only object names (preambles) are looked for: match fields such as `hdr.ipv4.$valid$` are not program text
    keyed = CURRENT.replace("  initial_default_action", '  match_fields {\n    id: 1\n    name: "h.$valid$"\n  }\n'
                            "  initial_default_action")
    assert p4c_samples.p4info_program_mismatch(keyed, program) is None
    renamed = program.replace("a()", "b()").replace("{ a; }", "{ b; }")
    assert "does not declare" in (p4c_samples.p4info_program_mismatch(CURRENT, renamed) or "")
    entries = CURRENT.replace("size: 1024", "size: 1024\n  has_initial_entries: true")
    assert "initial entries" in (p4c_samples.p4info_program_mismatch(entries, program) or "")


def test_candidates_filter_and_seed() -> None:
    frame = ["a-bmv2.stf", "b-bmv2.stf", "c_ebpf.stf", "psa-x-bmv2.stf", "ebpf/d-bmv2.stf", "e.stf", "f-bmv2.stf"]
    order = p4c_samples.candidates(frame, 16)
    assert sorted(order) == ["a-bmv2", "b-bmv2", "f-bmv2"]
    assert order == p4c_samples.candidates(list(reversed(frame)), 16)  # the seed alone fixes the order
    both = p4c_samples.p4info_candidates(frame, ["a-bmv2", "g", "x_ubpf"], 16)
    assert sorted(both) == ["a-bmv2", "b-bmv2", "f-bmv2", "g"]


TERNARY_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> v; }
struct H { h_t h; }
struct M {}
parser p(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control vc(inout H h, inout M m) { apply {} }
control ig(inout H h, inout M m, inout standard_metadata_t sm) {
    action set(bit<8> val) { h.h.v = val; }
    table t { key = { h.h.k : ternary; } actions = { set; NoAction; } default_action = NoAction(); }
    apply { sm.egress_spec = 0; t.apply(); }
}
control eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control ck(inout H h, inout M m) { apply {} }
control dp(packet_out b, in H h) { apply { b.emit(h.h); } }
V1Switch(p(), vc(), ig(), eg(), ck(), dp()) main;
"""


def test_table_commands_on_the_switch() -> None:
    """`0x0*` masks the high nibble only; k=1 matches both entries and the larger STF priority wins; the default
    action set by `setdefault` applies from the next packet on."""
    from p4switch.compiler import compile_text

    compiled = compile_text(TERNARY_PROGRAM, "stf_ternary")
    test = parse_stf(
        "add t 1 h.h.k:0x0* set(val:0x11)\n"
        "add t 2 k:0x01 ig.set(val:0x22)\n"
        "packet 0 01 00\nexpect 0 01 22\n"
        "packet 0 05 00\nexpect 0 05 11\n"
        "packet 0 15 00\nexpect 0 15 00\n"
        "setdefault t set(val:0x33)\n"
        "packet 0 15 00\nexpect 0 15 33\n")
    run = run_stf(compiled, test)
    assert run.command_error is None
    assert compare_outputs(test, run.outputs) is None
    assert run.outputs[0] == [b"\x01\x22", b"\x05\x11", b"\x15\x00", b"\x15\x33"]
    bad = run_stf(compiled, parse_stf("add t h.h.k:7 set(val:1)\n"))
    assert bad.command_error == "line 1: Decimal value 7 not supported for ternary key"


# bench/p4c_errors: p4c's stderr format (`file(line): [--Werror=kind] error: message`, the quoted preprocessed line
# with blanks collapsed, a caret line; a V1Switch type error's "---- Actual error:" part indented by two).

ERR_STDERR = """prog.p4(3): [--Wwarn=unused] warning: 'x' is unused
const bit<8> x = 1;
             ^
prog.p4(7): [--Werror=invalid] error: t: something is wrong
    table t {
          ^
[--Werror=overlimit] error: 1 errors encountered, aborting compilation
"""

ERR_NESTED = """v1model.p4(751): [--Werror=type-error] error: 'package V1Switch'
package V1Switch<H, M>(Parser<H, M> p,
        ^^^^^^^^
  ---- Actual error:
/some/dir/prog.p4(5): Cannot unify 'in' parameter 'h' with 'inout' parameter 'hdr' because they differ
  control c(in H h, inout M m) { apply {} }
                 ^
v1model.p4(725)
  control VerifyChecksum<H, M>(inout H hdr,
                                       ^^^
"""


def test_errors_first_error_skips_warnings_and_the_trailer() -> None:
    from bench.p4c_errors import first_error

    err = first_error(ERR_STDERR)
    assert err is not None and err.place is not None
    assert (err.place.file, err.place.line, err.place.caret, err.message) == ("prog.p4", 7, 11, "t: something is wrong")
    assert first_error("prog.p4(1): [--Wwarn=x] warning: w\n[--Werror=overlimit] error: 2 errors encountered, "
                       "aborting compilation\n") is None


def test_errors_actual_error_part_and_path_normalised() -> None:
    from bench.p4c_errors import first_error

    err = first_error(ERR_NESTED)
    assert err is not None and err.place is not None
    assert (err.place.file, err.place.line, err.place.caret) == ("prog.p4", 5, 18)
    assert err.message == "Cannot unify 'in' parameter 'h' with 'inout' parameter 'hdr' because they differ"


def test_errors_caret_mapped_through_collapsed_blanks() -> None:
    """p4c quotes `a  b   c` as `a b c`; its caret under `c` (column 5) is column 8 of the source line; the
    nested quote's two-space indent does not count either."""
    from bench.p4c_errors import source_column

    assert source_column("a b c", 5, "a  b   c") == 8
    assert source_column("  control c(in H h", 18, "control c(in   H h") == 18
    assert source_column("\ttable t {", 8, "    table t {") == 11


def test_errors_stale_output_relocated_or_not_compared() -> None:
    from bench.p4c_errors import first_error, judge

    """A program whose line 7 is the line p4c quotes is current; one more line above it and the quote is found at
    line 8 (relocated); without the quoted line nothing is compared."""
    program = "// a header\n\n" + "\n".join(f"// {i}" for i in range(4)) + "\n    table t {\n"
    assert program.splitlines()[6] == "    table t {"
    assert first_error(ERR_STDERR) is not None

    class Diag:
        def __init__(self, line: int, column: int, message: str) -> None:
            from p4switch.exceptions import SourceLocation
            self.location = SourceLocation("/x/prog.p4", line, column)
            self.message = message

    same = judge("prog.p4", program, ERR_STDERR, [Diag(7, 11, "t: something is wrong")])
    assert (same.same_location, same.same_message, same.stale) == (True, True, "")
    shifted = "// one more line\n" + program
    moved = judge("prog.p4", shifted, ERR_STDERR, [Diag(8, 11, "t: something is wrong")])
    assert moved.relocated and moved.stale and moved.same_location and moved.same_message
    gone = judge("prog.p4", program.replace("table t", "table u"), ERR_STDERR, [Diag(7, 11, "u: other")])
    assert gone.stale and not gone.relocated and gone.same_location is None and gone.same_message is None
    wrong = judge("prog.p4", program, ERR_STDERR, [Diag(7, 5, "t: something else")])
    assert (wrong.same_location, wrong.same_message) == (False, False)
    accepted = judge("prog.p4", program, ERR_STDERR, [])
    assert (accepted.rejected, accepted.same_location, accepted.same_message) == (False, False, False)
    unknown = judge("prog.p4", program, None, [Diag(7, 11, "t: something is wrong")])
    assert unknown.rejected and unknown.same_location is None


def test_programs_from_outputs_named_with_their_commit() -> None:
    meta = {"program_from_outputs": {"p4_16_samples/a-bmv2.p4": {"path": "testdata/p4_16_samples_outputs/a-bmv2.p4",
                                                                 "commit": "c1"}}}
    assert p4c_samples.programs_from_outputs(meta, ["a-bmv2", "b-bmv2"]) == {
        "a-bmv2": "testdata/p4_16_samples_outputs/a-bmv2.p4@c1"}
    assert p4c_samples.programs_from_outputs({}, ["a-bmv2"]) == {}


def test_stale_stf_counted_only_in_the_strictest_ratio() -> None:
    V = p4c_samples.Verdict
    results = {"a": V("pass"), "b": V("fail", "packet mismatch", "x"),
               "c": V("excluded", "program unusable", "p4_16_samples/c.p4: old"),
               "d": V("excluded", "data unusable", "p4_16_samples/d.stf: older than BMv2"),
               "e": V("excluded", "not fetched", "p4_16_samples/e.stf")}
    part = p4c_samples.summarise(results)
    assert (part["passed"], part["usable"], part["stale_programs"], part["strict_ratio"]) == (1, 2, 1, 0.3333)
    assert p4c_samples.stale_test_counts(results, part) == {"stale_stf": 1, "ratio_counting_stale_stf": 0.25}
