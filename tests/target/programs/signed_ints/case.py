from casekit import bits, exact, s

VALUES = [(100, 50), (-128, 1), (-1, -1), (127, -128), (-7, 3), (0, 0)]


def packet_out(a: int, b: int) -> bytes:
    return bits(
        (8, a), (8, b),
        (8, s(8, a + b)), (8, s(8, a - b)), (8, s(8, -a)),
        (8, int(a < b)), (8, int(a >= b)),
        (8, a >> 2),  # Python's >> on negative ints is arithmetic, like int<W>
        (16, a), (8, b), (8, s(8, a - 3)), (16, b),
    )  # fmt: skip


INPUT = [(0, bits((8, a), (8, b))) for a, b in VALUES]
EXPECTED = {2: [exact(packet_out(a, b)) for a, b in VALUES]}
