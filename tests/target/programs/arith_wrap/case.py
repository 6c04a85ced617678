from casekit import bits, exact, u

PAYLOAD = b"\xde\xad"
VALUES = [(200, 100, 0xFFFF, 2), (0, 1, 0, 1), (15, 17, 300, 300), (255, 255, 0x8000, 0x8000), (7, 0, 1, 0xFFFF)]


def packet_in(a: int, b: int, c: int, d: int) -> bytes:
    return bits((8, a), (8, b), (16, c), (16, d))


def packet_out(a: int, b: int, c: int, d: int) -> bytes:
    result = bits(
        (8, u(8, a + b)), (8, u(8, a - b)), (8, u(8, a * b)),
        (16, u(16, c + d)), (16, u(16, c - d)), (16, u(16, c * d)),
        (8, u(8, -a)), (8, u(8, ~a)), (8, u(8, a * 3 + b - 7)),
    )  # fmt: skip
    return packet_in(a, b, c, d) + result + PAYLOAD


INPUT = [(0, packet_in(*v) + PAYLOAD) for v in VALUES]
EXPECTED = {1: [exact(packet_out(*v)) for v in VALUES]}
