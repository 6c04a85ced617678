from casekit import exact, u

VALUES = [(1, 2), (200, 100), (0, 0)]


def out(a: int, b: int) -> bytes:
    # `seen` starts at 0 for every packet: two note() calls give 6 each time
    return bytes([u(8, 100 + a + b), 6, 11, a ^ 0xFF, a, b])


INPUT = [(0, bytes([a, b])) for a, b in VALUES]
EXPECTED = {1: [exact(out(a, b)) for a, b in VALUES]}
