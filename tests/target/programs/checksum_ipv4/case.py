from casekit import csum16, exact


def ipv4(ttl: int, src: bytes, dst: bytes, csum: int | None = None) -> bytes:
    head = bytes([0x45, 0, 0, 40, 0x12, 0x34, 0x40, 0, ttl, 17, 0, 0]) + src + dst
    value = csum16(head) if csum is None else csum
    return head[:10] + value.to_bytes(2, "big") + head[12:]


SRC, DST = bytes([10, 0, 0, 1]), bytes([192, 168, 1, 2])
PAY = b"payload!"
CASES = [
    (ipv4(64, SRC, DST), 1, ipv4(63, SRC, DST)),
    (ipv4(1, DST, SRC), 1, ipv4(0, DST, SRC)),
    (ipv4(64, SRC, DST, csum=0xBAD0), 0, ipv4(63, SRC, DST)),  # wrong on input: flagged, fixed on output
]
INPUT = [(0, i + PAY) for i, _, _ in CASES]
EXPECTED = {1: [exact(bytes([ok]) + o + PAY) for _, ok, o in CASES]}
