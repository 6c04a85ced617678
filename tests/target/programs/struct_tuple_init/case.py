from casekit import bits, exact, u

VALUES = [(1, 2), (255, 0xFFFF), (0x42, 0x1000)]
INPUT = [(0, bits((8, a), (16, b))) for a, b in VALUES]
EXPECTED = {
    1: [exact(bits((8, u(8, a + 1)), (16, b), (8, a ^ 0xFF), (16, u(16, b + 1)), (8, 16), (8, a), (16, b)))
        for a, b in VALUES]
}  # fmt: skip
