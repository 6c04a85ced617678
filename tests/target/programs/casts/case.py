from casekit import bits, exact

VALUES = [(0x1234, 0x42, 1), (0xFFFF, 0x80, 0), (0x00FF, 0x01, 1), (0xA5A5, 0xFF, 0)]


def packet_out(w: int, b: int, flag: int) -> bytes:
    return bits(
        (8, w & 0xFF), (16, b), (1, int(b == 0x42)), (7, 0), (8, 0xF1 if flag else 0xF0), (8, b), (32, w << 8),
    )  # fmt: skip


INPUT = [(0, bits((16, w), (8, b), (1, f), (7, 0x55))) for w, b, f in VALUES]
EXPECTED = {1: [exact(packet_out(*v)) for v in VALUES]}
