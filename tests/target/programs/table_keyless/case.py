from casekit import bits, exact, u

KEYS = [0, 1, 200, 255]
INPUT = [(0, bits((8, a))) for a in KEYS]
EXPECTED = {1: [exact(bits((8, u(8, 42 + a)), (8, u(8, 1 + a + 100)), (8, a))) for a in KEYS]}
