from casekit import exact, u

# Packet k (from 0): the shared counter is 2k+1 in a's application and 2k+2 in b's (one register for both; one per
# use would give k+1 twice). x = ((x << 1) + 2k+1) << 3) + 2k+2, on 16 bits.
X_VALUES = [0x0001, 0x1234, 0xFFFF]


def expected(k: int, x: int) -> int:
    x = u(16, (x << 1) + 2 * k + 1)
    return u(16, (x << 3) + 2 * k + 2)


INPUT = [(0, x.to_bytes(2, "big")) for x in X_VALUES]
EXPECTED = {1: [exact(expected(k, x).to_bytes(2, "big")) for k, x in enumerate(X_VALUES)]}
P4INFO_NAMES = ["register:I.e.s.r"]
