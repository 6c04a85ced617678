from casekit import bits, exact, s, sat_s


def out(a: int, n: int, b: int) -> bytes:
    shr = a >> min(n, 7)  # arithmetic: shifting by >= 7 leaves only sign bits
    shl = s(8, a << n) if n < 8 else 0
    return bits(
        (8, shr), (8, shl), (8, s(8, a * b)), (8, int(a < -5)), (8, sat_s(8, a - b)), (8, 0xFF), (8, s(8, -a)),
        (8, a), (8, n), (8, b),
    )  # fmt: skip


VALUES = [(-128, 10, 127), (-128, 1, 1), (-7, 3, -20), (100, 2, 3), (-1, 200, -1), (5, 7, -128), (-6, 0, 2)]
INPUT = [(0, bits((8, a), (8, n), (8, b))) for a, n, b in VALUES]
EXPECTED = {1: [exact(out(*v)) for v in VALUES]}
