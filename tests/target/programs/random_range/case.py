from casekit import Expect

SEED = 7


def in_range(p: bytes) -> bool:
    small, wide, fixed = p[0], int.from_bytes(p[1:3], "big"), p[3]
    return 10 <= small <= 20 and 1000 <= wide <= 1003 and fixed == 42


N = 50
INPUT = [(0, b"r%d" % i) for i in range(N)]
EXPECTED = {
    1: [Expect(bytes(8) + b"r%d" % i, bytes(8) + b"\xff" * len(b"r%d" % i), in_range, "random ranges") for i in range(N)]
}
