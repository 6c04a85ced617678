"""P4Info of v1model action profiles and selectors, by the rules of p4c's control-plane code
(p4RuntimeArchStandard: addActionProfile, collectTableProperties) and its stored outputs
(action_profile-bmv2, action_selector_shared-bmv2, action_profile_max_group_size_annotation)."""

from __future__ import annotations

import pytest

from p4switch.compiler import compile_text
from p4switch.exceptions import CompileError

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
struct H { }
struct M { bit<32> a; bit<16> b; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) { state start { transition accept; } }
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    @max_group_size(7) action_selector(HashAlgorithm.crc16, 32w32, 32w14) shared;
    table t1 { key = { m.a : exact; m.b : selector; } actions = { drop; } implementation = shared; }
    table t0 { key = { m.a : lpm; m.b : selector; } actions = { drop; } implementation = shared; }
    table t2 { key = { m.a : exact; } actions = { drop; }
               @name("plain") @max_group_size(3) implementation = action_profile(32w8); }
    apply { t1.apply(); t0.apply(); t2.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_profiles_tables_and_selector_keys() -> None:
    info = compile_text(PROGRAM, "ap").p4info
    tables = {t.preamble.name: t for t in info.tables}
    profiles = {p.preamble.name: p for p in info.action_profiles}
    # the inline instance is serialized with its table (t2, the last table), the declared one in declaration order
    assert list(profiles) == ["I.shared", "plain"]
    shared, plain = profiles["I.shared"], profiles["plain"]
    assert all(p.preamble.id >> 24 == 0x11 for p in (shared, plain))
    # a shared selector lists every table using it (p4c keeps a name-ordered set)
    assert list(shared.table_ids) == [tables["I.t0"].preamble.id, tables["I.t1"].preamble.id]
    assert shared.with_selector and shared.size == 32 and shared.max_group_size == 7
    assert shared.WhichOneof("selector_size_semantics") == "sum_of_weights"
    # @max_group_size on a profile without a selector: p4c warns and leaves it out
    assert not plain.with_selector and plain.size == 8 and plain.max_group_size == 0
    assert plain.WhichOneof("selector_size_semantics") is None
    assert list(plain.preamble.annotations) == []  # @name and @max_group_size are not copied
    assert tables["I.t1"].implementation_id == tables["I.t0"].implementation_id == shared.preamble.id
    assert tables["I.t2"].implementation_id == plain.preamble.id
    # selector keys are the selector's input, not match fields
    assert [f.name for f in tables["I.t1"].match_fields] == ["m.a"]
    assert [f.name for f in tables["I.t0"].match_fields] == ["m.a"]


def test_two_unnamed_inline_profiles_are_an_error() -> None:
    source = PROGRAM.replace('@name("plain") @max_group_size(3) ', "").replace(
        "implementation = shared; }\n    table t0", "implementation = action_profile(32w4); }\n    table t0")
    with pytest.raises(CompileError, match="two action profiles have this control-plane name"):
        compile_text(source, "ap2")
