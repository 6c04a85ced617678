from casekit import bits, exact

VALUES = [(5, 5), (200, 3), (3, 200), (0, 0), (0x80, 0x7F), (0x7F, 0x80)]


def packet_out(a: int, b: int) -> bytes:
    f = 0
    f |= 1 if a == b else 0
    f |= 2 if (a != b and a > b) else 0
    f |= 4 if (a < b or a == 0) else 0
    f |= 8 if not (a <= b) else 0
    f |= 16 if (a & 0x80) == 0x80 else 0
    f |= 32 if a >= b else 64
    return bits((8, a & b), (8, a | b), (8, a ^ b), (8, f), (8, max(a, b)), (8, min(a, b)))


INPUT = [(0, bits((8, a), (8, b))) for a, b in VALUES]
EXPECTED = {1: [exact(packet_out(a, b)) for a, b in VALUES]}
