"""A program using many language features at once: its P4Info shape (p4c's rules for @name, scopes, direct
resources, controller headers, type_info) and its behaviour through the generated module."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_support import Harness

from p4switch.compiler import CompiledProgram, compile_file
from p4switch.frontend.symbols import jenkins_one_at_a_time

PROGRAM = Path(__file__).resolve().parent / "programs" / "features.p4"


@pytest.fixture(scope="module")
def compiled() -> CompiledProgram:
    return compile_file(PROGRAM)


def test_p4info_shape(compiled: CompiledProgram) -> None:
    info = compiled.p4info
    t1, t2 = info.tables
    assert t1.preamble.name == "global_table"  # @name(".global_table")
    assert [f.name for f in t1.match_fields] == ["dmac", "h.ip.v4.$valid$"]
    assert t1.action_refs[1].scope == t1.action_refs[1].DEFAULT_ONLY
    assert t1.direct_resource_ids == [info.direct_counters[0].preamble.id]
    assert t2.const_default_action_id == t2.initial_default_action.action_id
    assert t2.direct_resource_ids == [info.direct_meters[0].preamble.id]
    assert [a.preamble.name for a in info.actions] == ["I.fwd_action", "I.setk", "I.nop"]
    assert info.actions[0].params[0].type_name.name == "port_t"
    header = info.controller_packet_metadata[0]
    assert header.preamble.name == "packet_in"
    assert header.preamble.id == (0x04 << 24) | (jenkins_one_at_a_time(b"pin_t") & 0xFFFFFF)
    assert info.digests[0].type_spec.struct.name == "dig_t"
    assert set(info.type_info.structs) == {"dig_t"}
    assert info.type_info.serializable_enums["Kind"].underlying_type.bitwidth == 8
    assert info.type_info.new_types["port_t"].original_type.bitstring.bit.bitwidth == 9


def test_behaviour(compiled: CompiledProgram) -> None:
    h = Harness(compiled)
    r = h.run(bytes(12) + b"\x86\xdd\x12\x34" + b"PAY", 64)
    # packet_in header (port 64), ethernet, the union's v4 member (v6 invalidated by setValid), results, payload
    assert r.out.hex() == "2000" + "00" * 12 + "86dd" + "03" + "2a" + "00" + "d5ff" + "00000003" + b"PAY".hex()
    assert h.digests == [("dig_t", (0, 64))]
    assert h.logs == ["hello 2 42"]
    r = h.run(bytes(12) + b"\x08\x00\x12", 3)
    assert r.out.hex() == "00" * 12 + "0800" + "12" + "2a00d5ff00000003"
