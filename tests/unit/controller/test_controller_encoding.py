"""Canonical P4Runtime byte strings and P4Info-driven entity building (against real p4c P4Info)."""

from __future__ import annotations

from pathlib import Path

import pytest
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.encoding import canonical, decode_int, encode, encode_int, format_mac, parse_value
from controller.exceptions import EncodingError, P4InfoError
from controller.p4info import P4InfoHelper, load_p4info, multicast_group, replica_port


@pytest.fixture(scope="module")
def helper(conformance_dir: Path) -> P4InfoHelper:
    return P4InfoHelper(load_p4info(conformance_dir / "p4info" / "runtime_tables.p4info.txtpb"))


@pytest.mark.parametrize(("value", "width", "expected"), [
    (0, 9, b"\x00"), (1, 9, b"\x01"), (256, 9, b"\x01\x00"), (511, 9, b"\x01\xff"),
    ("10.0.0.1", 32, b"\x0a\x00\x00\x01"), ("0.0.0.1", 32, b"\x01"),
    ("00:00:00:00:00:0a", 48, b"\x0a"), ("0x1234", 16, b"\x12\x34"), ("aa:bb:cc:dd:ee:ff", 48, bytes.fromhex("aabbccddeeff")),
])
def test_canonical_encoding(value: int | str, width: int, expected: bytes) -> None:
    assert encode(value, width) == expected
    assert decode_int(expected) == parse_value(value, width)


def test_out_of_range_and_garbage() -> None:
    with pytest.raises(EncodingError, match="does not fit in 9 bits"):
        encode_int(512, 9)
    with pytest.raises(EncodingError, match="negative"):
        encode_int(-1, 8)
    with pytest.raises(EncodingError, match="cannot parse"):
        encode("ten", 8)
    assert canonical(b"\x00\x00\x05") == b"\x05" and canonical(b"\x00\x00") == b"\x00"
    assert format_mac(0x0A) == "00:00:00:00:00:0a"


def test_lpm_ternary_exact_entries(helper: P4InfoHelper) -> None:
    lpm = helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": "10.1.2.3/16"}, "I.to_port", {"port": 3})
    assert lpm.table_id == 49652232
    fm = lpm.match[0]
    assert (fm.field_id, fm.lpm.value, fm.lpm.prefix_len) == (1, b"\x0a\x01\x00\x00", 16)  # host bits cleared
    assert len(helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": "0.0.0.0/0"}, "I.to_port", {"port": 1}).match) == 0
    acl = helper.table_entry("acl", {"h.ipv4.proto": 6, "h.ipv4.src": ("10.0.0.5", "255.255.0.0")},
                             "I.mark", {"v": 7}, priority=10)
    tern = {m.field_id: m.ternary for m in acl.match}
    assert tern[1].value == b"\x06" and tern[1].mask == b"\xff"
    assert tern[2].value == b"\x0a\x00\x00\x00" and tern[2].mask == b"\xff\xff\x00\x00"
    assert acl.priority == 10
    decoded = helper.decode_table_entry(lpm)
    assert decoded.table == "I.ipv4_lpm" and decoded.match == (("h.ipv4.dst", (0x0A010000, 16)),)
    assert decoded.action == "I.to_port" and decoded.params == (("port", 3),)


def test_names_are_checked(helper: P4InfoHelper) -> None:
    with pytest.raises(P4InfoError, match=r"no table named 'I\.nope'"):
        helper.table_entry("I.nope")
    with pytest.raises(P4InfoError, match="has no match field"):
        helper.table_entry("I.ipv4_lpm", {"dst": 1})
    with pytest.raises(P4InfoError, match="missing parameter port"):
        helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": "10.0.0.0/8"}, "I.to_port")
    with pytest.raises(P4InfoError, match="not an action of table"):
        helper.table_entry("I.ipv4_lpm", {"h.ipv4.dst": "10.0.0.0/8"}, "I.pair_hit", {})
    with pytest.raises(P4InfoError, match="give a priority"):
        helper.table_entry("I.acl", {"h.ipv4.proto": 6}, "NoAction")
    with pytest.raises(EncodingError, match="parameter port"):
        helper.action("I.to_port", {"port": 1 << 9})


def test_multicast_group_replicas() -> None:
    pre = multicast_group(5, [(1, 0), (300, 1)])
    replicas = pre.multicast_group_entry.replicas
    assert [replica_port(r) for r in replicas] == [1, 300]
    r = p4runtime_pb2.Replica(port=b"\x01\x2c", instance=1)
    assert replica_port(r) == 300
    with pytest.raises(EncodingError, match="multicast group id must be > 0"):
        multicast_group(0, [])


def _packet_io_p4info() -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    for pid, name, fields in ((0x4000001, "packet_in", [(1, "ingress_port", 9), (2, "_pad", 7)]),
                              (0x4000002, "packet_out", [(2, "egress_port", 9), (1, "mcast", 16)])):
        m = info.controller_packet_metadata.add()
        m.preamble.id, m.preamble.name = pid, name
        for fid, fname, width in fields:
            m.metadata.add(id=fid, name=fname, bitwidth=width)
    c = info.counters.add()
    c.preamble.id, c.preamble.name, c.preamble.alias, c.size = 0x12000001, "I.rx", "rx", 8
    r = info.registers.add()
    r.preamble.id, r.preamble.name, r.size = 0x13000001, "I.cells", 4
    return info


def test_packet_metadata_by_p4info_id_not_position() -> None:
    helper = P4InfoHelper(_packet_io_p4info())
    out = helper.packet_out(b"frame", {"egress_port": 3, "mcast": 0x102})
    assert out.payload == b"frame"
    assert {(m.metadata_id, m.value) for m in out.metadata} == {(2, b"\x03"), (1, b"\x01\x02")}
    with pytest.raises(P4InfoError, match="packet_out has no metadata port"):
        helper.packet_out(b"", {"port": 1})
    pin = p4runtime_pb2.PacketIn(payload=b"x")
    pin.metadata.add(metadata_id=2, value=b"\x00")  # listed first, but id 2 is _pad
    pin.metadata.add(metadata_id=1, value=b"\x01\x05")
    assert helper.decode_packet_in(pin) == {"_pad": 0, "ingress_port": 261}


def test_counter_and_register_indices_are_checked() -> None:
    helper = P4InfoHelper(_packet_io_p4info())
    assert helper.counter_entry("I.rx", 7).index.index == 7
    assert not helper.counter_entry("rx").HasField("index")  # alias; no index reads the whole array
    with pytest.raises(P4InfoError, match=r"index 8 outside 0\.\.7"):
        helper.counter_entry("I.rx", 8)
    assert helper.register_entry("I.cells", 3).register_id == 0x13000001
    with pytest.raises(P4InfoError, match="no register named"):
        helper.register_entry("I.nope")


def test_bad_p4info_files_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.txtpb").write_text("tables { nonsense: 1 }")
    (tmp_path / "bad.bin").write_bytes(b"\xff\xff\xff")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe")
    for name in ("bad.txtpb", "bad.bin", "bin.txt", "missing.txt"):
        with pytest.raises(P4InfoError) as info:
            load_p4info(tmp_path / name)
        assert "\n" not in str(info.value) and name in str(info.value)
