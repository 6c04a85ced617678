from casekit import exact


def flags(a: bytes, b: bytes | None) -> int:
    """c is never valid; b is valid only when parsed."""
    f = 0
    f |= 1 if (b is not None and a == b) else 2
    f |= 4 if b is None else 0  # two invalid headers are equal
    return f


CASES = [
    (bytes([0xBB, 0x01]), bytes([0xBB, 0x01])),
    (bytes([0xBB, 0x01]), bytes([0xBB, 0x02])),
    (bytes([0x10, 0x20]), None),
]
INPUT = [(0, a + (b or b"")) for a, b in CASES]
EXPECTED = {1: [exact(bytes([flags(a, b)]) + a + (b or b"")) for a, b in CASES]}
