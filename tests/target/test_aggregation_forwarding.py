"""The rest of p4ina.p4's data plane: IPv4 routing, per-flow ECMP and per-packet spraying across uplinks, L2, the
priority of gradients, PFC frames counted and never forwarded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aggnet import ING, AggSwitch, compiled_program
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

ROUTER_MAC = 0x02AA00000001
NH_MACS = [0x02BB00000001, 0x02BB00000002, 0x02BB00000003]

SwitchAndOutput = tuple[AggSwitch, list[tuple[int, bytes]]]


@pytest.fixture
def switch() -> Iterator[SwitchAndOutput]:
    compiled_program()
    out: list[tuple[int, bytes]] = []
    sw = AggSwitch("r1", 0, lambda _name, port, frame: out.append((port, frame)))
    yield sw, out
    sw.stop()


def _ip(dst: str, sport: int = 1000, proto: str = "udp", ttl: int = 64) -> bytes:
    l4 = UDP(sport=sport, dport=5000) if proto == "udp" else TCP(sport=sport, dport=80)
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:aa:00:00:00:01") / IP(src="10.0.0.1", dst=dst, ttl=ttl)
                 / l4 / Raw(b"payload"))


def test_route_rewrites_macs_and_ttl(switch: SwitchAndOutput) -> None:
    sw, out = switch
    sw.add_entry(f"{ING}.forwarding.ipv4_lpm", {"hdr.ipv4.dst_addr": (0x0A010000, 16)}, f"{ING}.forwarding.route",
                 port=2, src_mac=ROUTER_MAC, dst_mac=NH_MACS[0])
    sw.inject(1, _ip("10.1.2.3"))
    ((port, frame),) = out
    pkt = Ether(frame)
    assert port == 2 and pkt.src == "02:aa:00:00:00:01" and pkt.dst == "02:bb:00:00:00:01"
    assert pkt[IP].ttl == 63
    chk = pkt[IP].chksum
    del pkt[IP].chksum
    assert Ether(bytes(pkt))[IP].chksum == chk, "the IPv4 checksum is recomputed"


def test_ttl_expiry_bad_checksum_and_no_route_are_dropped(switch: SwitchAndOutput) -> None:
    sw, out = switch
    sw.add_entry(f"{ING}.forwarding.ipv4_lpm", {"hdr.ipv4.dst_addr": (0x0A010000, 16)}, f"{ING}.forwarding.route",
                 port=2, src_mac=ROUTER_MAC, dst_mac=NH_MACS[0])
    sw.inject(1, _ip("10.1.2.3", ttl=1))
    bad = bytearray(_ip("10.1.2.3"))
    bad[24] ^= 0xFF  # IPv4 header checksum
    sw.inject(1, bytes(bad))
    sw.inject(1, _ip("192.168.0.1"))  # no route, no L2 entry
    assert out == []
    assert sw.counter(f"{ING}.forwarding.fwd_drops", 1) == 3


def _ecmp(sw: AggSwitch, action: str) -> None:
    sw.add_entry(f"{ING}.forwarding.ipv4_lpm", {"hdr.ipv4.dst_addr": (0x0A020000, 16)}, f"{ING}.forwarding.{action}",
                 group=7, size=3)
    for member in range(3):
        sw.add_entry(f"{ING}.forwarding.ecmp_members",
                     {"meta.fwd.ecmp_group": 7, "meta.fwd.ecmp_member": member}, f"{ING}.forwarding.route",
                     port=10 + member, src_mac=ROUTER_MAC, dst_mac=NH_MACS[member])


def test_ecmp_keeps_flows_and_spreads_them(switch: SwitchAndOutput) -> None:
    sw, out = switch
    _ecmp(sw, "route_ecmp")
    for sport in range(1000, 1060):
        for _ in range(2):
            sw.inject(1, _ip("10.2.0.9", sport=sport, proto="tcp"))
    ports = [p for p, _ in out]
    assert len(ports) == 120
    assert all(ports[i] == ports[i + 1] for i in range(0, 120, 2)), "a flow stays on one member"
    assert set(ports) == {10, 11, 12}
    for p, f in out:
        assert Ether(f).dst == f"02:bb:00:00:00:0{p - 9}"


def test_spray_spreads_one_flow(switch: SwitchAndOutput) -> None:
    sw, out = switch
    _ecmp(sw, "route_spray")
    for _ in range(60):
        sw.inject(1, _ip("10.2.0.9", sport=4242))
    assert {p for p, _ in out} == {10, 11, 12}


def test_l2_forwarding_when_not_routed(switch: SwitchAndOutput) -> None:
    sw, out = switch
    sw.add_entry(f"{ING}.forwarding.l2", {"hdr.ethernet.dst_addr": 0x02AA00000001}, f"{ING}.forwarding.l2_forward",
                 port=5)
    frame = _ip("172.16.0.1")
    sw.inject(1, frame)
    assert out == [(5, frame)]


def test_pfc_frames_are_counted_not_forwarded(switch: SwitchAndOutput) -> None:
    sw, out = switch
    sw.add_entry(f"{ING}.forwarding.l2", {"hdr.ethernet.dst_addr": 0x0180C2000001}, f"{ING}.forwarding.l2_forward",
                 port=5)
    pfc = bytes.fromhex("0180c2000001" "020000000001" "8808" "0101" "0003" "ffff" "ffff" + "0000" * 6) + bytes(26)
    sw.inject(3, pfc)
    sw.inject(3, pfc)
    assert out == []
    assert sw.counter(f"{ING}.qos.pfc_rx", 3) == 2
