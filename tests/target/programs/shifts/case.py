from casekit import bits, exact, u

VALUES = [(0xB7, 1, 0x8001), (0xFF, 7, 0xFFFF), (0xFF, 8, 0x1234), (0x81, 12, 0xF00F), (0x01, 0, 0x0001), (0xC3, 250, 7)]


def packet_out(a: int, n: int, w: int) -> bytes:
    return bits(
        (8, u(8, a << 3)), (8, a >> 3), (8, u(8, a << n)), (8, a >> n), (16, u(16, w << 9)), (16, w >> n),
        (8, a >> u(8, n + 8)),
    )  # fmt: skip


INPUT = [(0, bits((8, a), (8, n), (16, w))) for a, n, w in VALUES]
EXPECTED = {1: [exact(packet_out(*v)) for v in VALUES]}
