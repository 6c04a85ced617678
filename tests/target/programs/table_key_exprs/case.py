from casekit import exact

ENTRIES = [  # (high nibble, opt valid, (nib value, mask) or None, result); the first match wins
    (0xA, True, None, 1),
    (0xA, False, (0x3, 0xF), 2),
    (0xA, False, None, 3),
    (0xB, True, (0x0, 0x8), 4),
]


def lookup(a: int, valid: bool) -> int:
    for hi, v, nib, r in ENTRIES:
        if a >> 4 == hi and v == valid and (nib is None or (a & 0xF) & nib[1] == nib[0]):
            return r
    return 0xFF


CASES = [(0xA3, 0), (0xA3, 1), (0xA4, 0), (0xB7, 1), (0xB8, 1), (0xC0, 0)]
INPUT = [(0, bytes([a, b]) + (b"\x99" if b == 1 else b"")) for a, b in CASES]
EXPECTED = {
    1: [exact(bytes([lookup(a, b == 1), 0x5A, a, b]) + (b"\x99" if b == 1 else b"")) for a, b in CASES]
}
P4INFO_NAMES = ["field:I.t:h.k.a[7:4]", "field:I.t:h.opt.$valid$", "field:I.t:m.nib"]
