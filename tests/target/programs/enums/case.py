from casekit import bits, exact, u


def out(op: int, a: int, b: int) -> bytes:
    result, color = {1: (u(8, a + b), 1), 2: (u(8, a - b), 2), 0x10: (a ^ b, 0)}.get(op, (0xFF, 0))
    return bits((8, result), (8, color), (8, 2), (8, op), (8, a), (8, b))


VALUES = [(1, 200, 100), (2, 5, 10), (0x10, 0xF0, 0x0F), (3, 1, 1)]
INPUT = [(0, bits((8, op), (8, a), (8, b))) for op, a, b in VALUES]
EXPECTED = {1: [exact(out(*v)) for v in VALUES]}
