"""Well-formed packets for the fuzz_parser program, shared by its case and by the fuzzing test (which mutates
them). Built with Scapy's standard layers."""

from __future__ import annotations

from scapy.contrib.mpls import MPLS
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether


def templates() -> list[bytes]:
    eth = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
    tunnel = bytes([0xA5, 0x07, 0x12, 0x34])
    packets = [
        eth / IP(src="10.0.0.1", dst="10.0.0.2", ttl=64) / UDP(sport=1, dport=2) / b"udp",
        eth / IP(src="10.0.0.1", dst="10.0.0.2", ttl=1) / TCP(sport=1, dport=80) / b"tcp",
        eth / Dot1Q(vlan=10) / IP(dst="10.0.0.3") / UDP(dport=4789) / tunnel / b"inner",
        eth / Dot1Q(vlan=10) / Dot1Q(vlan=20) / IPv6(dst="2001:db8::1", hlim=9) / UDP(dport=53) / b"dns",
        eth / MPLS(label=100, s=0) / MPLS(label=200, s=1) / IP(dst="10.0.0.4") / TCP() / b"mpls",
        eth / IPv6(dst="2001:db8::2") / TCP(dport=443) / b"tls",
        Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01", type=0x88B5) / b"unknown ethertype",
    ]
    return [bytes(p) for p in packets]
