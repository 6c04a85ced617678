from casekit import bits, exact
from fuzz_parser.packets import templates
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1Q, Ether


def summary(err: int, vlans: int, labels: int, l3: int, l4: int, tunnel: int) -> bytes:
    return bits((8, err), (8, vlans), (8, labels), (8, l3), (8, l4), (8, tunnel))


def dec_at(packet: bytes, offset: int) -> bytes:
    """The packet with the byte at `offset` (a TTL or hop limit) decremented, saturating at 0."""
    return packet[:offset] + bytes([max(packet[offset] - 1, 0)]) + packet[offset + 1 :]


T = templates()
ETH = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
THREE_VLANS = bytes(ETH / Dot1Q(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / IP() / UDP())
BAD_VERSION = bytearray(T[0])
BAD_VERSION[14] = 0x55  # version 5, ihl 5

CASES = [
    (T[0], 1, summary(0, 0, 0, 4, 17, 0) + dec_at(T[0], 14 + 8)),
    (T[1], 1, summary(0, 0, 0, 4, 6, 0) + dec_at(T[1], 14 + 8)),
    (T[2], 1, summary(0, 1, 0, 4, 17, 7) + dec_at(T[2], 14 + 4 + 8)),
    (T[3], 2, summary(0, 2, 0, 6, 17, 0) + dec_at(T[3], 14 + 8 + 7)),
    (T[4], 1, summary(0, 0, 2, 4, 6, 0) + dec_at(T[4], 14 + 8 + 8)),
    (T[5], 2, summary(0, 0, 0, 6, 6, 0) + dec_at(T[5], 14 + 7)),
    (T[6], 3, summary(0, 0, 0, 0, 0, 0) + T[6]),
    # errors: the packet leaves unchanged on port 4 behind the summary
    (T[0][:20], 4, summary(1, 0, 0, 0, 0, 0) + T[0][:20]),  # PacketTooShort in IPv4
    (THREE_VLANS, 4, summary(2, 2, 0, 0, 0, 0) + THREE_VLANS),  # StackOutOfBounds on the third tag
    (bytes(BAD_VERSION), 4, summary(3, 0, 0, 4, 0, 0) + bytes(BAD_VERSION)),  # verify() failed after extract
]
INPUT = [(0, data) for data, _, _ in CASES]
EXPECTED: dict[int, list] = {}
for _, port, out in CASES:
    EXPECTED.setdefault(port, []).append(exact(out))
