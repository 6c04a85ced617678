"""x = 3 hits the entry written to I.Scale.t (y * 5); any other x takes the default action (y + 1). The byte
after a_t is extracted by the directly applied sub-parser and incremented in ingress."""

from casekit import exact

P4INFO_NAMES = ["table:I.Scale.t", "action:I.Scale.times", "action:I.Scale.plus_one"]
CASES = [(3, 7, 9), (4, 7, 9), (3, 60, 0xFF)]
INPUT = [(0, bytes([x, y, z])) for x, y, z in CASES]
EXPECTED = {1: [exact(bytes([x, (y * 5) % 256 if x == 3 else y + 1, (z + 1) % 256])) for x, y, z in CASES]}
