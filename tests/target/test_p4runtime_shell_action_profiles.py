"""p4runtime-shell (package `p4runtime_sh`, an independent client that reads the P4Info's action profiles and
tables' `implementation_id` itself) programs an ECMP selector on the embedded switch: members, a group, entries
pointing at a member, a group and a one-shot action set, then reads them back; packets take the member BMv2/PI
select (`hash % n` over the group's member handles in creation order, crc32 of the selector keys = `zlib.crc32`)."""

from __future__ import annotations

import struct
import threading
import zlib
from pathlib import Path

import p4runtime_sh.shell as sh
from test_p4runtime_action_selectors_live import ECMP_P4, FLOWS, packet
from test_p4runtime_shell import Connect, shell_on  # noqa: F401  (the fixture)


def test_shell_programs_an_ecmp_selector(tmp_path: Path, shell_on: Connect) -> None:  # noqa: F811
    from p4switch import compiler
    from p4switch.server import P4RuntimeServer
    from p4switch.switch.core import Switch

    p4info_path, config_path = compiler.write_outputs(compiler.compile_text(ECMP_P4, "ecmp"), tmp_path)
    ports: list[int] = []
    lock = threading.Lock()

    def collect(port: int, data: bytes) -> None:
        with lock:
            ports.append(port)

    switch = Switch()
    switch.add_output_callback(collect)
    switch.start()
    try:
        server = P4RuntimeServer(switch, address="127.0.0.1:0").start()
        shell_on(server, p4info_path, config_path)
        for member_id in (1, 2, 3):
            member = sh.ActionProfileMember("I.sel")(member_id=member_id, action="I.set_port")
            member.action["port"] = str(member_id + 4)
            member.insert()
        group = sh.ActionProfileGroup("I.sel")(group_id=7)
        group.add(3).add(1).add(2)
        group.insert()
        to_group = sh.TableEntry("I.ecmp")
        to_group.match["h.eth.etype"] = "0x0800"
        to_group.group_id = 7
        to_group.insert()
        to_member = sh.TableEntry("I.ecmp")
        to_member.match["h.eth.etype"] = "0x0801"
        to_member.member_id = 2
        to_member.insert()

        assert sorted(m.member_id for m in sh.ActionProfileMember("I.sel").read()) == [1, 2, 3]
        [read_group] = list(sh.ActionProfileGroup("I.sel").read())
        assert [m.member_id for m in read_group.members] == [1, 2, 3]
        read_entries = {e.match["h.eth.etype"].exact.value: e for e in sh.TableEntry("I.ecmp").read()}
        assert read_entries[b"\x08\x00"].group_id == 7 and read_entries[b"\x08\x01"].member_id == 2

        for flow in FLOWS:
            switch.inject(0, packet(0x0800, flow))
            assert switch.wait_idle(10)
        switch.inject(0, packet(0x0801, FLOWS[0]))
        assert switch.wait_idle(10)
        by_handle = [5, 6, 7]  # members 1, 2, 3 in creation order
        expected = [by_handle[zlib.crc32(struct.pack("!IIHH", *f)) % 3] for f in FLOWS] + [6]
        with lock:
            assert ports == expected
    finally:
        switch.stop()
