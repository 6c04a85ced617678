"""The IPv4 checksum from RFC 1071's sum (casekit.csum16), not from the switch: with the blocks bound by name,
ck recomputes it after ingress decrements the TTL, vr flags a wrong one, and the tag is first - second = 7."""

from casekit import csum16, exact


def ipv4(ttl: int, csum: int | None = None) -> bytes:
    head = bytes([0x45, 0, 0, 28, 0x12, 0x34, 0x40, 0, ttl, 17, 0, 0]) + bytes([10, 0, 0, 1, 10, 0, 0, 2])
    value = csum16(head) if csum is None else csum
    return head[:10] + value.to_bytes(2, "big") + head[12:]


PAY = b"12345678"
CASES = [(ipv4(64), 1, ipv4(63)), (ipv4(9, csum=0x1234), 0, ipv4(8))]
INPUT = [(0, i + PAY) for i, _, _ in CASES]
EXPECTED = {1: [exact(bytes([ok, 7]) + o + PAY) for _, ok, o in CASES]}
