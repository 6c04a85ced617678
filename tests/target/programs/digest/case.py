from casekit import bits, exact

PACKETS = [bits((8, 1), (16, 0x1234)), bits((8, 0), (16, 0)), bits((8, 9), (16, 0xFFFF)) + b"x"]
P4INFO_NAMES = ["digest:learn_t"]
INPUT = [(0, p) for p in PACKETS]
EXPECTED = {2: [exact(p) for p in PACKETS]}
