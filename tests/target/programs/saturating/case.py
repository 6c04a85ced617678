from casekit import bits, exact, sat_s, sat_u

VALUES = [(200, 100, 100, 100), (10, 20, -100, 100), (255, 0, 127, -128), (0, 255, -128, -1), (5, 5, 5, 5)]


def packet_out(a: int, b: int, x: int, y: int) -> bytes:
    return bits((8, a), (8, b), (8, x), (8, y)) + bits(
        (8, sat_u(8, a + b)), (8, sat_u(8, a - b)), (8, sat_s(8, x + y)), (8, sat_s(8, x - y)),
        (16, sat_u(16, a + 65000)),
    )  # fmt: skip


INPUT = [(0, bits((8, a), (8, b), (8, x), (8, y))) for a, b, x, y in VALUES]
EXPECTED = {1: [exact(packet_out(*v)) for v in VALUES]}
