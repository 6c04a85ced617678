from casekit import bits, exact, u

VALUES = [(5, 9), (200, 100), (15, 15), (0, 255)]
INPUT = [(0, bits((8, a), (8, b))) for a, b in VALUES]
EXPECTED = {
    1: [
        exact(bits((8, max(a, b)), (8, min(max(a, 10), 20)), (8, b), (8, a), (8, u(8, 2 * max(a, 3))), (8, a), (8, b)))
        for a, b in VALUES
    ]
}
