"""Action profiles and selectors end to end (ECMP): members, groups, indirect entries, selection, refusals, reads.

Expected egress ports come from BMv2's and PI's documented behaviour, computed here independently of the switch:
the selector hashes its `selector` keys (the fields' bytes concatenated, MSB first) with the instance's algorithm
(crc32 here, so `zlib.crc32`), and PI's group selector takes member `hash % n` of the group's n BMv2 member handles
in ascending order (handles are given in creation order; a member of weight w is w handles, its copies created
when the group needs them). Deleting a member or group still in use fails on the target: PI answers UNKNOWN.
"""

from __future__ import annotations

import struct
import threading
import zlib

from p4.v1 import p4runtime_pb2
from p4runtime_support import entity, live_switch, table_update

INSERT, MODIFY, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE

#: Headers, parser and the empty blocks both test programs share (each adds its own ingress control `I`).
_PREAMBLE = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
header flow_t { bit<32> src; bit<32> dst; bit<16> sport; bit<16> dport; }
struct headers_t { ethernet_t eth; flow_t flow; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.flow); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
"""
_POSTAMBLE = r"""
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.flow); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

ECMP_P4 = _PREAMBLE + r"""
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    @max_group_size(4) action_selector(HashAlgorithm.crc32, 32w64, 32w16) sel;
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table ecmp {
        key = { h.eth.etype : exact; h.flow.src : selector; h.flow.dst : selector;
                h.flow.sport : selector; h.flow.dport : selector; }
        actions = { set_port; drop; }
        default_action = drop();
        implementation = sel;
    }
    apply { ecmp.apply(); }
}
""" + _POSTAMBLE

FLOWS = [(0x0A000001 + i, 0x0A0000FE - 3 * i, 1000 + 7 * i, 80 + i) for i in range(12)]


def packet(etype: int, flow: tuple[int, int, int, int]) -> bytes:
    return bytes(12) + struct.pack("!H", etype) + struct.pack("!IIHH", *flow) + bytes(30)


def crc32_hash(flow: tuple[int, int, int, int]) -> int:
    """BMv2's crc32 over the selector keys in key order: 32+32+16+16 bits, byte aligned, so plain concatenation."""
    return zlib.crc32(struct.pack("!IIHH", *flow))


def member(profile_id: int, member_id: int, action_id: int, port: int) -> str:
    return (f"action_profile_member {{ action_profile_id: {profile_id} member_id: {member_id} action {{ "
            f'action_id: {action_id} params {{ param_id: 1 value: "\\{port:03o}" }} }} }}')


def group(profile_id: int, group_id: int, members: list[tuple[int, int]]) -> str:
    body = "".join(f"members {{ member_id: {m} weight: {w} }} " for m, w in members)
    return f"action_profile_group {{ action_profile_id: {profile_id} group_id: {group_id} {body}}}"


def test_p4info_describes_the_selector() -> None:
    from p4switch import compiler

    info = compiler.compile_text(ECMP_P4, "ecmp").p4info
    [table] = info.tables
    [profile] = info.action_profiles
    assert profile.preamble.name == "I.sel" and profile.preamble.id >> 24 == 0x11
    assert profile.with_selector and profile.size == 64 and profile.max_group_size == 4
    assert list(profile.table_ids) == [table.preamble.id]
    assert table.implementation_id == profile.preamble.id
    assert [f.name for f in table.match_fields] == ["h.eth.etype"]  # selector keys are not match fields


def test_ecmp_members_groups_and_selection() -> None:
    out: list[tuple[int, bytes]] = []
    lock = threading.Lock()

    def collect(port: int, data: bytes) -> None:
        with lock:
            out.append((port, data))

    with live_switch(ECMP_P4, "ecmp", collect) as (program, switch, client):
        info = program.p4info
        [table] = info.tables
        [profile] = info.action_profiles
        ap = profile.preamble.id
        set_port = next(a.preamble.id for a in info.actions if a.preamble.name == "I.set_port")
        drop = next(a.preamble.id for a in info.actions if a.preamble.name == "I.drop")

        def entry(etype: int, target: str) -> str:
            return (f"table_entry {{ table_id: {table.preamble.id} match {{ field_id: 1 exact {{ "
                    f'value: "\\{etype >> 8:03o}\\{etype & 255:03o}" }} }} action {{ {target} }} }}')

        def run(etype: int) -> list[int]:
            with lock:
                out.clear()
            for flow in FLOWS:
                switch.inject(0, packet(etype, flow))
                assert switch.wait_idle(10)
            with lock:
                return [port for port, _ in out]

        ok = ("OK", [])
        for mid, port in ((10, 1), (20, 2), (30, 3)):
            assert client.write_updates(table_update(INSERT, member(ap, mid, set_port, port))) == ok
        assert client.write_updates(table_update(INSERT, group(ap, 1, [(30, 1), (10, 1), (20, 1)]))) == ok
        assert client.write_updates(table_update(INSERT, entry(0x0800, "action_profile_group_id: 1"))) == ok
        assert client.write_updates(table_update(INSERT, entry(0x0801, "action_profile_member_id: 20"))) == ok

        by_handle = [1, 2, 3]  # members 10, 20, 30 got handles 0, 1, 2
        expected = [by_handle[crc32_hash(f) % 3] for f in FLOWS]
        assert len(set(expected)) > 1  # the flows do spread, so a wrong hash or order shows
        assert run(0x0800) == expected
        assert run(0x0801) == [2] * len(FLOWS)
        assert run(0x0802) == []  # miss: the default action drops

        # refused while referenced (BMv2 refuses, PI reports UNKNOWN), and PI's group checks
        assert client.write_updates(table_update(DELETE, member(ap, 10, set_port, 1))) == ("UNKNOWN", ["UNKNOWN"])
        assert client.write_updates(table_update(DELETE, member(ap, 20, set_port, 2))) == ("UNKNOWN", ["UNKNOWN"])
        assert client.write_updates(table_update(DELETE, group(ap, 1, []))) == ("UNKNOWN", ["UNKNOWN"])
        too_big = group(ap, 2, [(10, 2), (20, 2), (30, 1)])
        assert client.write_updates(table_update(INSERT, too_big)) == ("UNKNOWN", ["RESOURCE_EXHAUSTED"])
        zero = group(ap, 2, [(10, 0)])
        assert client.write_updates(table_update(INSERT, zero)) == ("UNKNOWN", ["INVALID_ARGUMENT"])
        missing = group(ap, 2, [(99, 1)])
        assert client.write_updates(table_update(INSERT, missing)) == ("UNKNOWN", ["NOT_FOUND"])
        wrong_action = (f"action_profile_member {{ action_profile_id: {ap} member_id: 40 action {{ "
                        f"action_id: {drop} }} }}")
        assert client.write_updates(table_update(INSERT, wrong_action)) == ok  # drop is an action of the table
        assert client.write_updates(table_update(DELETE, wrong_action)) == ok  # unreferenced: deleted

        # reads
        members = client.read(entity(f"action_profile_member {{ action_profile_id: {ap} }}"))
        assert [m.action_profile_member.member_id for m in members] == [10, 20, 30]
        [g] = client.read(entity(f"action_profile_group {{ action_profile_id: {ap} group_id: 1 }}"))
        assert [(m.member_id, m.weight) for m in g.action_profile_group.members] == [(10, 1), (20, 1), (30, 1)]
        entries = client.read(entity(f"table_entry {{ table_id: {table.preamble.id} }}"))
        kinds = sorted(e.table_entry.action.WhichOneof("type") for e in entries)
        assert kinds == ["action_profile_group_id", "action_profile_member_id"]

        # weights as PI programs them: member 10 with weight 2 gets a copy, a new handle after 30's (handle 3)
        assert client.write_updates(table_update(MODIFY, group(ap, 1, [(10, 2), (20, 1)]))) == ok
        by_handle = [1, 2, 1]  # handles 0 (member 10), 1 (member 20), 3 (member 10's copy)
        assert run(0x0800) == [by_handle[crc32_hash(f) % 3] for f in FLOWS]

        # a member's MODIFY reaches the entries and groups using it
        assert client.write_updates(table_update(MODIFY, member(ap, 20, set_port, 4))) == ok
        assert run(0x0801) == [4] * len(FLOWS)

        # an empty group: BMv2 runs no action (egress_spec stays 0)
        assert client.write_updates(table_update(INSERT, group(ap, 2, []))) == ok
        assert client.write_updates(table_update(INSERT, entry(0x0803, "action_profile_group_id: 2"))) == ok
        assert run(0x0803) == [0] * len(FLOWS)

        # once unreferenced, deletes succeed
        assert client.write_updates(table_update(DELETE, entry(0x0801, "action_profile_member_id: 20"))) == ok
        assert client.write_updates(table_update(DELETE, entry(0x0800, "action_profile_group_id: 1"))) == ok
        assert client.write_updates(table_update(DELETE, group(ap, 1, []))) == ok
        assert client.write_updates(table_update(DELETE, member(ap, 10, set_port, 1))) == ok
        members = client.read(entity(f"action_profile_member {{ action_profile_id: {ap} }}"))
        assert [m.action_profile_member.member_id for m in members] == [20, 30]


ONESHOT_P4 = _PREAMBLE + r"""
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table lb {
        key = { h.eth.etype : exact; h.flow.dport : selector; h.flow.src : selector; }
        actions = { set_port; drop; }
        default_action = drop();
        @name("lb_sel") implementation = action_selector(HashAlgorithm.crc16, 32w16, 32w16);
    }
    table fwd {
        key = { h.eth.dst : exact; }
        actions = { set_port; drop; }
        default_action = drop();
        @name("fwd_ap") implementation = action_profile(32w4);
    }
    apply { if (h.eth.etype == 0x0900) { fwd.apply(); } else { lb.apply(); } }
}
""" + _POSTAMBLE


def crc16_arc(data: bytes) -> int:
    """CRC-16/ARC (BMv2's crc16): polynomial 0x8005 reflected (0xA001), init 0, no final xor; bit by bit."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def test_crc16_arc_check_value() -> None:
    assert crc16_arc(b"123456789") == 0xBB3D  # the catalogued check value of CRC-16/ARC


def test_one_shot_action_sets_inline_instances_and_defaults() -> None:
    out: list[int] = []
    lock = threading.Lock()

    def collect(port: int, data: bytes) -> None:
        with lock:
            out.append(port)

    with live_switch(ONESHOT_P4, "oneshot", collect) as (program, switch, client):
        info = program.p4info
        tables = {t.preamble.name: t for t in info.tables}
        profiles = {p.preamble.name: p for p in info.action_profiles}
        assert set(profiles) == {"lb_sel", "fwd_ap"}  # an inline instance takes the property's @name verbatim
        lb, fwd = tables["I.lb"], tables["I.fwd"]
        assert lb.implementation_id == profiles["lb_sel"].preamble.id
        assert fwd.implementation_id == profiles["fwd_ap"].preamble.id and not profiles["fwd_ap"].with_selector
        set_port = next(a.preamble.id for a in info.actions if a.preamble.name == "I.set_port")
        sel = profiles["lb_sel"].preamble.id

        def action(port: int) -> str:
            return f'action {{ action_id: {set_port} params {{ param_id: 1 value: "\\{port:03o}" }} }}'

        def lb_entry(action_set: str) -> str:
            return (f'table_entry {{ table_id: {lb.preamble.id} match {{ field_id: 1 exact {{ value: "\\010\\000" }} }} '
                    f"action {{ action_profile_action_set {{ {action_set} }} }} }}")

        def run(etype: int, flows: list[tuple[int, int, int, int]]) -> list[int]:
            with lock:
                out.clear()
            for flow in flows:
                switch.inject(0, packet(etype, flow))
                assert switch.wait_idle(10)
            with lock:
                return list(out)

        ok = ("OK", [])
        one_shot = (f"action_profile_actions {{ {action(5)} weight: 1 }} "
                    f"action_profile_actions {{ {action(6)} weight: 2 }}")
        assert client.write_updates(table_update(INSERT, lb_entry(one_shot))) == ok
        by_handle = [5, 6, 6]  # PI creates one member per unit of weight, in the set's order: handles 0, 1, 2
        # the selector keys in key order: dport (16 bits) then src (32 bits)
        expected = [by_handle[crc16_arc(struct.pack("!HI", f[3], f[0])) % 3] for f in FLOWS]
        assert len(set(expected)) > 1
        assert run(0x0800, FLOWS) == expected
        [read] = client.read(entity(f"table_entry {{ table_id: {lb.preamble.id} }}"))
        action_set = read.table_entry.action.action_profile_action_set.action_profile_actions
        assert [(a.action.params[0].value, a.weight) for a in action_set] == [(b"\x05", 1), (b"\x06", 2)]

        mixed = member(sel, 1, set_port, 1)  # the selector is in one-shot mode now (PI)
        assert client.write_updates(table_update(INSERT, mixed)) == ("UNKNOWN", ["INVALID_ARGUMENT"])
        empty = lb_entry("").replace("\\010\\000", "\\010\\001")
        assert client.write_updates(table_update(INSERT, empty)) == ("UNKNOWN", ["UNIMPLEMENTED"])
        default = f"table_entry {{ table_id: {lb.preamble.id} is_default_action: true action {{ {action(1)} }} }}"
        assert client.write_updates(table_update(MODIFY, default)) == ("UNKNOWN", ["INVALID_ARGUMENT"])
        assert client.write_updates(table_update(DELETE, lb_entry(one_shot))) == ok
        assert client.write_updates(table_update(INSERT, mixed)) == ok  # empty again: manual mode is allowed

        # a plain action profile: an entry points at a member
        ap = profiles["fwd_ap"].preamble.id
        assert client.write_updates(table_update(INSERT, member(ap, 7, set_port, 3))) == ok
        fwd_entry = (f'table_entry {{ table_id: {fwd.preamble.id} match {{ field_id: 1 exact {{ value: "\\000\\000'
                     '\\000\\000\\000\\000" } } action { action_profile_member_id: 7 } }')
        assert client.write_updates(table_update(INSERT, fwd_entry)) == ok
        assert run(0x0900, FLOWS[:2]) == [3, 3]
