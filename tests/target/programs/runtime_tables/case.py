from casekit import bits, exact

EXACT = {0x0102: (7, 2), 0x0A0B: (8, 3)}
TERNARY = [(10, 0x80, 0x80, 1), (20, 0x81, 0xFF, 2), (5, 0x01, 0x01, 3)]  # (priority, value, mask, result)
LPM = [(0x0A000000, 8, 8), (0x0A010000, 16, 16)]


def tern(flags: int) -> int:
    hits = [(p, r) for p, v, m, r in TERNARY if flags & m == v & m]
    return max(hits)[1] if hits else 0


def lpm(dst: int) -> int:
    hits = [(n, r) for p, n, r in LPM if dst >> (32 - n) == p >> (32 - n)]
    return max(hits)[1] if hits else 0xDD


KEYS = [(0x0102, 0x81, 0x0A010203), (0x0A0B, 0x80, 0x0A020304), (0x9999, 0x01, 0x0B000000), (0, 0x83, 0x0A01FFFF)]
INPUT = [(0, bits((16, i), (8, f), (32, d))) for i, f, d in KEYS]
EXPECTED: dict[int, list] = {}
for i, f, d in KEYS:
    e, port = EXACT.get(i, (0, 1))
    EXPECTED.setdefault(port, []).append(exact(bits((8, e), (8, tern(f)), (8, lpm(d)), (16, i), (8, f), (32, d))))
