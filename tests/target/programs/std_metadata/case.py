from casekit import bits, exact

PACKETS = [(0, b"a" * 10), (2, b"b" * 60), (3, b"c"), (2, b"d" * 1500), (4, b"e")]
INPUT = PACKETS
EXPECTED: dict[int, list] = {}
for port, data in PACKETS:
    EXPECTED.setdefault(port, []).append(exact(bits((16, port), (16, port), (32, len(data)), (32, 0)) + data))
