from casekit import bits, exact

ENTRIES = {
    (1, 0x0100): ("fwd", 2, 0xAAAA),
    (1, 0x0200): ("fwd", 3, 0xBBBB),
    (2, 0x0100): ("tag", None, 0xCCCC),
    (0xFF, 0xFFFF): ("fwd", 4, 0x1234),
}
KEYS = [(1, 0x0100), (1, 0x0200), (2, 0x0100), (2, 0x0200), (0xFF, 0xFFFF), (0, 0)]

INPUT = [(0, bits((8, a), (16, b))) for a, b in KEYS]
EXPECTED: dict[int, list] = {}
for a, b in KEYS:
    kind, port, data = ENTRIES.get((a, b), ("miss", None, 0xDEAD))
    code = {"fwd": 1, "tag": 2, "miss": 3}[kind]
    EXPECTED.setdefault(port or 1, []).append(exact(bits((8, code), (16, data), (8, a), (16, b))))
