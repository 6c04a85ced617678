from casekit import exact


def out(a: bytes, b: bytes | None) -> bytes:
    """a and b as parsed (b only after a.x == 0xBB); emit order o, a, b, copy."""
    f = 0
    copy = a
    f |= 2 | 4  # the copy of a valid header is valid and equal to it
    new_a = None if a[1] == 0xFF else a
    new_b = b if b is not None else bytes([copy[0], (copy[1] + 1) & 0xFF])
    return bytes([f, 2]) + (new_a or b"") + new_b + copy


CASES = [
    (bytes([0xBB, 0x01]), bytes([0xBB, 0x01])),
    (bytes([0xBB, 0x01]), bytes([0xBB, 0x02])),
    (bytes([0x10, 0x20]), None),
    (bytes([0x10, 0xFF]), None),
]
INPUT = [(0, a + (b or b"") + b"z") for a, b in CASES]
EXPECTED = {1: [exact(out(a, b) + b"z") for a, b in CASES]}
