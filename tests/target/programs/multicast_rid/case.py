from casekit import bits, exact

GROUPS = {1: [(1, 10), (2, 20), (2, 21)], 7: [(3, 70)]}
REPLICATION = 5

INPUT = [(0, bits((16, g)) + b"m") for g in (1, 7, 0, 1)]
EXPECTED: dict[int, list] = {}
for g in (1, 7, 0, 1):
    if g == 0:  # unicast: rid 0, instance type normal
        EXPECTED.setdefault(4, []).append(exact(bits((16, 0), (8, 4), (8, 0), (16, 0)) + b"m"))
        continue
    for port, rid in GROUPS[g]:
        EXPECTED.setdefault(port, []).append(exact(bits((16, rid), (8, port), (8, REPLICATION), (16, g)) + b"m"))
