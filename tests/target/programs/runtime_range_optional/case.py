from casekit import bits, exact

ENTRIES = [(30, 1000, 2000, 6, 1), (20, 0, 1500, None, 2), (40, 1400, 1600, 17, 3)]  # (prio, lo, hi, proto, v)


def lookup(port: int, proto: int) -> int:
    hits = [(p, v) for p, lo, hi, want, v in ENTRIES if lo <= port <= hi and want in (None, proto)]
    return max(hits)[1] if hits else 0


KEYS = [(1200, 6), (1200, 17), (1500, 17), (1500, 6), (1700, 17), (3000, 6), (0, 0)]
INPUT = [(0, bits((16, p), (8, q))) for p, q in KEYS]
EXPECTED = {1: [exact(bits((8, lookup(p, q)), (16, p), (8, q))) for p, q in KEYS]}
