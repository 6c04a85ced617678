from casekit import bits, crc16, exact

# BMv2 (with PI's group selector): member hash % 3 of the group's members in handle (creation) order, the hash being
# the selector's CRC-16 over its keys in key order (port, then src), packed MSB first. Members 1, 2, 3 -> ports 2, 3, 4.
FLOWS = [(0x0A000001 + 17 * i, 1000 + 3 * i) for i in range(9)]
BY_HANDLE = [2, 3, 4]


def frame(kind: int, src: int, port: int) -> bytes:
    return bits((8, kind), (32, src), (16, port))


def group_port(src: int, port: int) -> int:
    return BY_HANDLE[crc16(bits((16, port), (32, src))) % 3]


INPUT = ([(0, frame(1, s, p)) for s, p in FLOWS] + [(0, frame(2, s, p)) for s, p in FLOWS[:2]]
         + [(0, frame(3, 1, 1))])  # kind 3 misses: the default action drops it
EXPECTED: dict[int, list] = {}
for s, p in FLOWS:
    EXPECTED.setdefault(group_port(s, p), []).append(exact(frame(1, s, p)))
EXPECTED.setdefault(4, []).extend(exact(frame(2, s, p)) for s, p in FLOWS[:2])
assert len(EXPECTED) > 1  # the flows spread over the members
P4INFO_NAMES = ["action_profile:I.sel"]
