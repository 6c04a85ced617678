from casekit import exact

STACK = bytes([0x10, 0x11, 0x12, 0x13])
CASES = [(0, 3), (2, 2), (3, 0), (1, 1)]


def out(i: int, j: int) -> bytes:
    s = bytearray(STACK)
    read = s[i]
    s[j] = 0xEE
    return bytes([read, i, j]) + bytes(s)


INPUT = [(0, bytes([i, j]) + STACK) for i, j in CASES]
EXPECTED = {1: [exact(out(i, j)) for i, j in CASES]}
