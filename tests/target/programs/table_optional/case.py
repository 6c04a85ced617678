from casekit import bits, exact

ENTRIES = [(6, 80, 1), (6, None, 2), (17, 53, 3)]  # earlier entries win


def lookup(proto: int, port: int) -> int:
    return next((v for p, q, v in ENTRIES if p == proto and q in (None, port)), 0)


KEYS = [(6, 80), (6, 443), (17, 53), (17, 54), (1, 80)]
INPUT = [(0, bits((8, p), (16, q))) for p, q in KEYS]
EXPECTED = {1: [exact(bits((8, lookup(p, q)), (8, p), (16, q))) for p, q in KEYS]}
