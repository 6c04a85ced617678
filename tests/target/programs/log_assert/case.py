from casekit import bits, exact

PACKETS = [bits((8, 7), (16, 300)), bits((8, 0), (16, 0)) + b"more"]
LOG_CONTAINS = ["p4ina log_assert: plain message"]
INPUT = [(0, p) for p in PACKETS]
EXPECTED = {1: [exact(p) for p in PACKETS]}
