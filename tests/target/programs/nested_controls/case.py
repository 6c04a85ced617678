from casekit import bits, exact, u

TABLE = {1: 0x11, 2: 0x22}
VALUES = [1, 2, 3, 250]
P4INFO_NAMES = ["table:I.lookup.t"]
INPUT = [(0, bits((8, a))) for a in VALUES]
EXPECTED = {1: [exact(bits((8, u(8, a + 21)), (8, TABLE.get(a, 0xEE)), (8, a))) for a in VALUES]}
