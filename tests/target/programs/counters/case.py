from casekit import exact

PACKETS = [bytes([0]) + b"a", bytes([1]) + b"bb", bytes([2]) + b"ccc", bytes([0]), bytes([9]) + b"out of range"]
PORT = {0: 1, 1: 2}  # table entries; everything else stays on port 3

P4INFO_NAMES = ["counter:I.by_packets", "counter:I.by_bytes", "counter:I.by_both", "direct_counter:I.per_entry"]
INPUT = [(0, p) for p in PACKETS]
EXPECTED: dict[int, list] = {}
for p in PACKETS:
    EXPECTED.setdefault(PORT.get(p[0], 3), []).append(exact(p))
